/**
 * Generated from docs/openapi.json by openapi-typescript: do not edit.
 * Regenerate with `make ts-client` (or `npm run generate` in clients/typescript).
 */

export interface paths {
    "/v1/chat": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Chat with the documents: an agent retrieves, answers and cites */
        post: operations["chat"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/conversations": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The caller's conversations, most recent first */
        get: operations["listConversations"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/conversations/{conversation_id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** A conversation's turns (answers whose documents changed since are withheld) */
        get: operations["getConversation"];
        put?: never;
        post?: never;
        /** Delete a conversation */
        delete: operations["deleteConversation"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/evaluations": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The caller's evaluation jobs, newest first */
        get: operations["listEvaluations"];
        put?: never;
        /** Run a question set through chat and score every answer (a job) */
        post: operations["createEvaluation"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/evaluations/{evaluation_id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Where an evaluation job stands; its summary once completed */
        get: operations["getEvaluation"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/evaluations/{evaluation_id}/report": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** A completed job's report: one self-contained HTML page, or its JSON */
        get: operations["getEvaluationReport"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/hosting-search": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** POST /v1/hosting-search */
        post: operations["hosting_search_v1_hosting_search_post"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/keys": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** GET /v1/keys */
        get: operations["list_keys_v1_keys_get"];
        put?: never;
        /** POST /v1/keys */
        post: operations["create_key_v1_keys_post"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/keys/{key_id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        post?: never;
        /** DELETE /v1/keys/{key_id} */
        delete: operations["revoke_key_v1_keys__key_id__delete"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/namespaces": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** GET /v1/namespaces */
        get: operations["list_namespaces_v1_namespaces_get"];
        put?: never;
        /** POST /v1/namespaces */
        post: operations["create_namespace_v1_namespaces_post"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/namespaces/{namespace}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** GET /v1/namespaces/{namespace} */
        get: operations["get_namespace_v1_namespaces__namespace__get"];
        put?: never;
        post?: never;
        /** DELETE /v1/namespaces/{namespace} */
        delete: operations["delete_namespace_v1_namespaces__namespace__delete"];
        options?: never;
        head?: never;
        /** PATCH /v1/namespaces/{namespace} */
        patch: operations["update_namespace_v1_namespaces__namespace__patch"];
        trace?: never;
    };
    "/v1/namespaces/{namespace}/documents": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** GET /v1/namespaces/{namespace}/documents */
        get: operations["list_documents_v1_namespaces__namespace__documents_get"];
        put?: never;
        /** POST /v1/namespaces/{namespace}/documents */
        post: operations["add_text_v1_namespaces__namespace__documents_post"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/namespaces/{namespace}/documents/{document_id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** GET /v1/namespaces/{namespace}/documents/{document_id} */
        get: operations["get_document_v1_namespaces__namespace__documents__document_id__get"];
        put?: never;
        post?: never;
        /** DELETE /v1/namespaces/{namespace}/documents/{document_id} */
        delete: operations["delete_document_v1_namespaces__namespace__documents__document_id__delete"];
        options?: never;
        head?: never;
        /** PATCH /v1/namespaces/{namespace}/documents/{document_id} */
        patch: operations["relabel_document_v1_namespaces__namespace__documents__document_id__patch"];
        trace?: never;
    };
    "/v1/namespaces/{namespace}/reindex": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** POST /v1/namespaces/{namespace}/reindex */
        post: operations["reindex_namespace_v1_namespaces__namespace__reindex_post"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/namespaces/{namespace}/search": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** POST /v1/namespaces/{namespace}/search */
        post: operations["search_v1_namespaces__namespace__search_post"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/namespaces/{namespace}/sources": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** GET /v1/namespaces/{namespace}/sources */
        get: operations["list_sources_v1_namespaces__namespace__sources_get"];
        put?: never;
        /** POST /v1/namespaces/{namespace}/sources */
        post: operations["create_source_v1_namespaces__namespace__sources_post"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/namespaces/{namespace}/sources/{source_id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** GET /v1/namespaces/{namespace}/sources/{source_id} */
        get: operations["get_source_v1_namespaces__namespace__sources__source_id__get"];
        put?: never;
        post?: never;
        /** DELETE /v1/namespaces/{namespace}/sources/{source_id} */
        delete: operations["delete_source_v1_namespaces__namespace__sources__source_id__delete"];
        options?: never;
        head?: never;
        /** PATCH /v1/namespaces/{namespace}/sources/{source_id} */
        patch: operations["update_source_v1_namespaces__namespace__sources__source_id__patch"];
        trace?: never;
    };
    "/v1/namespaces/{namespace}/sources/{source_id}/sync": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** POST /v1/namespaces/{namespace}/sources/{source_id}/sync */
        post: operations["sync_source_v1_namespaces__namespace__sources__source_id__sync_post"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/runs/{run_id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Where a run stands; its final event once it ended */
        get: operations["getRun"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/runs/{run_id}/cancel": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Stop a run: it ends `cancelled`, charged for what it spent */
        post: operations["cancelRun"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/runs/{run_id}/events": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** A run's events after Last-Event-ID, then its live tail until it ends */
        get: operations["runEvents"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/tenant/identity-provider": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** GET /v1/tenant/identity-provider */
        get: operations["get_identity_provider_v1_tenant_identity_provider_get"];
        /** PUT /v1/tenant/identity-provider */
        put: operations["put_identity_provider_v1_tenant_identity_provider_put"];
        post?: never;
        /** DELETE /v1/tenant/identity-provider */
        delete: operations["delete_identity_provider_v1_tenant_identity_provider_delete"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/usage": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** GET /v1/usage */
        get: operations["usage_v1_usage_get"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/webhooks": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** GET /v1/webhooks */
        get: operations["list_webhooks_v1_webhooks_get"];
        put?: never;
        /** POST /v1/webhooks */
        post: operations["create_webhook_v1_webhooks_post"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/webhooks/{webhook_id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** GET /v1/webhooks/{webhook_id} */
        get: operations["get_webhook_v1_webhooks__webhook_id__get"];
        put?: never;
        post?: never;
        /** DELETE /v1/webhooks/{webhook_id} */
        delete: operations["delete_webhook_v1_webhooks__webhook_id__delete"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/webhooks/{webhook_id}/rotate-secret": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** POST /v1/webhooks/{webhook_id}/rotate-secret */
        post: operations["rotate_webhook_secret_v1_webhooks__webhook_id__rotate_secret_post"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
}
export type webhooks = Record<string, never>;
export interface components {
    schemas: {
        /** AccessView */
        AccessView: {
            /** Users */
            users: string[];
            /** Groups */
            groups: string[];
            /** Everyone */
            everyone: boolean;
        };
        /** AddText */
        AddText: {
            /**
             * Filename
             * @description Name with extension, e.g. notes.md
             */
            filename: string;
            /** Text */
            text: string;
            /**
             * Documentid
             * @description Defaults to the id derived from the filename; A-Z a-z 0-9 _ . - / ~, at most 240.
             */
            documentId?: string | null;
            /**
             * Metadata
             * @description Document metadata, {key: value}: strings, numbers, booleans, lists of strings, and dates (ISO-8601, for keys the namespace declares as dates). Each key's type is fixed per namespace by the first document carrying it (or a declaration); at most 50 keys, 16 KiB.
             */
            metadata?: {
                [key: string]: unknown;
            };
            /** @description Who may read it; default: everyone. */
            access?: components["schemas"]["DocumentAccess"];
        };
        /** AnswerDelta */
        AnswerDelta: {
            /**
             * Type
             * @default text
             * @constant
             */
            type: "text";
            /** Text */
            text: string;
        };
        /**
         * AnswerResult
         * @description One question answered under one configuration, scored.
         */
        AnswerResult: {
            /** Questionid */
            questionId: string;
            /** Config */
            config: string;
            /** Question */
            question: string;
            /**
             * Reference
             * @default null
             */
            reference: string | null;
            /**
             * Runid
             * @default
             */
            runId: string;
            /**
             * Answer
             * @default
             */
            answer: string;
            /**
             * Exitreason
             * @default
             */
            exitReason: string;
            /** Citations */
            citations?: string[];
            /** Sources */
            sources?: components["schemas"]["SourceRef"][];
            /** @default null */
            plan: components["schemas"]["QueryPlan"] | null;
            scores?: components["schemas"]["AnswerScores"];
            /**
             * Judgereason
             * @default
             */
            judgeReason: string;
            /**
             * Error
             * @default null
             */
            error: string | null;
            usage?: components["schemas"]["Usage"];
        };
        /** AnswerScores */
        AnswerScores: {
            /**
             * Faithfulness
             * @default null
             */
            faithfulness: number | null;
            /**
             * Citationprecision
             * @default null
             */
            citationPrecision: number | null;
            /**
             * Citationcoverage
             * @default null
             */
            citationCoverage: number | null;
            /**
             * Goldrecall
             * @default null
             */
            goldRecall: number | null;
            /**
             * Correctness
             * @default null
             */
            correctness: number | null;
            /**
             * Completeness
             * @default null
             */
            completeness: number | null;
        };
        /**
         * ChatEvent
         * @description One Server-Sent Event: its `event` name is the `type` of its JSON `data`.
         */
        ChatEvent: {
            /** @description The event's sequence number in its run: send it back as `Last-Event-ID` to `GET /v1/runs/{runId}/events` to resume after it (absent on a replay's one event). */
            id?: string;
            event: string;
            data: string;
        };
        /**
         * ChatRequest
         * @description ``POST /v1/chat``. The tenant is never part of it: it comes from the authorizer.
         */
        ChatRequest: {
            /** Messages */
            messages: components["schemas"]["RequestMessage"][];
            /** Namespaces */
            namespaces?: string[] | "auto";
            /**
             * Mode
             * @default accurate
             * @enum {string}
             */
            mode: "accurate" | "fast" | "normal" | "agentic" | "deepResearch";
            /**
             * Agent
             * @default agentic
             * @enum {string}
             */
            agent: "auto" | "agentic" | "deep_search" | "chain_of_rag";
            /**
             * Stream
             * @default true
             */
            stream: boolean;
            /**
             * Filter
             * @description A metadata filter (see the README's Filters): one operator object, e.g. {"andAll": [{"equals": {"key": "product", "value": "kettle"}}, {"greaterThanOrEquals": {"key": "year", "value": 2024}}]}. Operators: equals, notEquals, greaterThan, greaterThanOrEquals, lessThan, lessThanOrEquals, in, notIn, startsWith, listContains, exists, andAll, orAll, not; at most 8 levels and 64 conditions. Applied inside the store, out of band: no model can change it.
             * @default null
             */
            filter: ({
                equals: {
                    key: string;
                    value: string | number | boolean;
                };
            } | {
                notEquals: {
                    key: string;
                    value: string | number | boolean;
                };
            } | {
                greaterThan: {
                    key: string;
                    value: string | number | boolean;
                };
            } | {
                greaterThanOrEquals: {
                    key: string;
                    value: string | number | boolean;
                };
            } | {
                lessThan: {
                    key: string;
                    value: string | number | boolean;
                };
            } | {
                lessThanOrEquals: {
                    key: string;
                    value: string | number | boolean;
                };
            } | {
                startsWith: {
                    key: string;
                    value: string | number | boolean;
                };
            } | {
                listContains: {
                    key: string;
                    value: string | number | boolean;
                };
            } | {
                in: {
                    key: string;
                    value: (string | number | boolean)[];
                };
            } | {
                notIn: {
                    key: string;
                    value: (string | number | boolean)[];
                };
            } | {
                exists: {
                    key: string;
                };
            } | {
                andAll: Record<string, never>[];
            } | {
                orAll: Record<string, never>[];
            } | {
                /** @description A filter (this same shape). */
                not: Record<string, never>;
            }) | null;
            /**
             * Conversationid
             * @default null
             */
            conversationId: string | null;
            /**
             * Background
             * @default false
             */
            background: boolean;
        };
        /**
         * ChatResponse
         * @description ``stream: false``: the whole run as one body.
         */
        ChatResponse: {
            /**
             * Answer
             * @default
             */
            answer: string;
            /** Sources */
            sources?: components["schemas"]["ChunkView"][];
            /** Warnings */
            warnings?: components["schemas"]["Warning"][];
            /** Steps */
            steps?: (components["schemas"]["ToolStarted"] | components["schemas"]["ToolFinished"])[];
            /** @default null */
            error: components["schemas"]["RunError"] | null;
            /** @default null */
            route: components["schemas"]["Route"] | null;
            /** @default null */
            collections: components["schemas"]["Collections"] | null;
            usage?: components["schemas"]["Usage"];
            /** @default null */
            grounding: components["schemas"]["Grounding"] | null;
            /** @default null */
            plan: components["schemas"]["QueryPlan"] | null;
            /**
             * Exitreason
             * @default
             */
            exitReason: string;
            /**
             * Runid
             * @default
             */
            runId: string;
            /**
             * Conversationid
             * @default null
             */
            conversationId: string | null;
            /**
             * Replayed
             * @default false
             */
            replayed: boolean;
        };
        /**
         * ChunkView
         * @description A chunk as a client sees it: where it lives, its text, and why it ranked (when it did).
         *
         *     ``id`` is the id the answer's ``<citation ids="…"/>`` markers use.
         */
        ChunkView: {
            /** Id */
            id: string;
            /** Namespace */
            namespace: string;
            /** Documentid */
            documentId: string;
            /** Sequencenumber */
            sequenceNumber: number;
            /** Text */
            text: string;
            /**
             * Filename
             * @default
             */
            filename: string;
            /**
             * Source
             * @default
             */
            source: string;
            /**
             * Page
             * @default null
             */
            page: number | null;
            /** Headingpath */
            headingPath?: string[];
            /**
             * Widertext
             * @default
             */
            widerText: string;
            /** Metadata */
            metadata?: {
                [key: string]: unknown;
            };
            /**
             * Score
             * @default null
             */
            score: number | null;
            /** @default null */
            scores: components["schemas"]["Scores"] | null;
        };
        /**
         * Collections
         * @description Which namespaces a run searches: streamed when the request named none (or ``"auto"``).
         */
        Collections: {
            /**
             * Type
             * @default collections
             * @constant
             */
            type: "collections";
            /** Namespaces */
            namespaces: string[];
            /** Reason */
            reason: string;
        };
        /**
         * ConfluenceSettings
         * @description Confluence Cloud: the pages of the named spaces (all spaces the credentials can read, when
         *     none is named). Credentials (``email`` and ``apiToken``) are the source's secret, never settings.
         */
        ConfluenceSettings: {
            /** Siteurl */
            siteUrl: string;
            /** Spaces */
            spaces?: string[];
            /**
             * Maxpages
             * @default 50000
             */
            maxPages: number;
        };
        /** ConversationList */
        ConversationList: {
            /** Conversations */
            conversations: components["schemas"]["ConversationSummary"][];
        };
        /** ConversationSummary */
        ConversationSummary: {
            /** Conversationid */
            conversationId: string;
            /** Title */
            title: string;
            /** Createdat */
            createdAt: string;
            /** Updatedat */
            updatedAt: string;
            /** Turncount */
            turnCount: number;
        };
        /** ConversationView */
        ConversationView: {
            /** Conversationid */
            conversationId: string;
            /** Createdat */
            createdAt: string;
            /** Updatedat */
            updatedAt: string;
            /** Turns */
            turns: components["schemas"]["TurnView"][];
            /** Turncount */
            turnCount: number;
            usage: components["schemas"]["Usage"];
        };
        /**
         * DocumentAccess
         * @description Who may read a document: users and groups (none named: every user of the namespace).
         */
        DocumentAccess: {
            /** Users */
            users?: string[];
            /** Groups */
            groups?: string[];
        };
        /**
         * DocumentDeletion
         * @description ``deleting``: the S3 object was removed and its event will remove the chunks (202);
         *     ``deleted``: an API document's chunks are gone (200).
         */
        DocumentDeletion: {
            /** Documentid */
            documentId: string;
            /**
             * Status
             * @enum {string}
             */
            status: "deleting" | "deleted";
            document?: components["schemas"]["DocumentView"] | null;
        };
        /** DocumentError */
        DocumentError: {
            /** Code */
            code: string;
            /** Message */
            message: string;
        };
        /**
         * DocumentLabels
         * @description ``PATCH /v1/namespaces/{ns}/documents/{id}``: a document's metadata and/or access, each replaced
         *     whole when present and kept when absent. The content is not re-read or re-embedded.
         */
        DocumentLabels: {
            /**
             * Metadata
             * @description Document metadata, {key: value}: strings, numbers, booleans, lists of strings, and dates (ISO-8601, for keys the namespace declares as dates). Each key's type is fixed per namespace by the first document carrying it (or a declaration); at most 50 keys, 16 KiB.
             */
            metadata?: {
                [key: string]: unknown;
            } | null;
            access?: components["schemas"]["DocumentAccess"] | null;
        };
        /** DocumentList */
        DocumentList: {
            /** Documents */
            documents: components["schemas"]["DocumentView"][];
        };
        /**
         * DocumentUpdate
         * @description A change of a document's metadata or access. ``updated`` (200): an API or CLI document, its
         *     new labels served now; ``updating`` (202): an S3 document, whose metadata lives in its sidecar
         *     ``<key>.metadata.json`` — the sidecar was written, and its event re-labels the document.
         */
        DocumentUpdate: {
            /** Documentid */
            documentId: string;
            /**
             * Status
             * @enum {string}
             */
            status: "updating" | "updated";
            document: components["schemas"]["DocumentView"];
        };
        /**
         * DocumentView
         * @description What a tenant sees of a record (no tenant id, no internal generation).
         */
        DocumentView: {
            /** Documentid */
            documentId: string;
            /**
             * Status
             * @enum {string}
             */
            status: "queued" | "processing" | "ready" | "failed" | "deleting" | "deleted";
            /** Source */
            source: string;
            /** Metadata */
            metadata: {
                [key: string]: unknown;
            };
            access: components["schemas"]["AccessView"] | null;
            /** Chunkcount */
            chunkCount: number;
            /** Pages */
            pages: number;
            /** Contenthash */
            contentHash: string;
            /** Versionid */
            versionId: string;
            error: components["schemas"]["DocumentError"] | null;
            /** Attempts */
            attempts: number;
            /** Updatedat */
            updatedAt: string;
            /**
             * Serving
             * @enum {string}
             */
            serving: "this_version" | "previous_version" | "nothing";
        };
        /**
         * ErrorBody
         * @description The one error shape every route answers with, whatever the status.
         */
        ErrorBody: {
            error: components["schemas"]["ErrorDetail"];
        };
        /** ErrorDetail */
        ErrorDetail: {
            /** Code */
            code: string;
            /** Message */
            message: string;
            /** Details */
            details?: {
                [key: string]: unknown;
            };
        };
        /**
         * EvalConfig
         * @description One configuration of the pipeline: what a chat request would set, and the hybrid fusion its
         *     searches use (``None``: the deployment's).
         */
        EvalConfig: {
            /**
             * Label
             * @default A
             */
            label: string;
            /**
             * Agent
             * @default agentic
             * @enum {string}
             */
            agent: "auto" | "agentic" | "deep_search" | "chain_of_rag";
            /**
             * Mode
             * @default accurate
             * @enum {string}
             */
            mode: "accurate" | "fast";
            /** Namespaces */
            namespaces?: string[];
            /**
             * Fusion
             * @default null
             */
            fusion: ("rrf" | "convex" | "adaptive") | null;
            /**
             * Alpha
             * @default null
             */
            alpha: number | null;
        };
        /**
         * EvalQuestion
         * @description One question of a set. ``gold``: the passages that answer it, each a document id, a file name or
         *     a chunk id (``document#sequence``); ``namespaces``: where it is asked (else the configuration's).
         */
        EvalQuestion: {
            /** Id */
            id: string;
            /** Question */
            question: string;
            /**
             * Reference
             * @default null
             */
            reference: string | null;
            /** Gold */
            gold?: string[];
            /**
             * Namespaces
             * @default null
             */
            namespaces: string[] | null;
        };
        /** EvaluationList */
        EvaluationList: {
            /** Evaluations */
            evaluations: components["schemas"]["EvaluationView"][];
        };
        /**
         * EvaluationReport
         * @description The report's content (its JSON form; the HTML renders exactly this).
         */
        EvaluationReport: {
            evaluation: components["schemas"]["EvaluationView"];
            /**
             * Judge
             * @default
             */
            judge: string;
            /** Summaries */
            summaries?: {
                [key: string]: components["schemas"]["MetricSummary"][];
            };
            /** Comparison */
            comparison?: components["schemas"]["MetricDifference"][];
            /** Results */
            results?: components["schemas"]["AnswerResult"][];
        };
        /**
         * EvaluationRequest
         * @description ``POST /v1/evaluations``: the questions and one configuration, or two to compare (A/B).
         */
        EvaluationRequest: {
            /**
             * Name
             * @default
             */
            name: string;
            /** Questions */
            questions: components["schemas"]["EvalQuestion"][];
            /** Configs */
            configs?: components["schemas"]["EvalConfig"][];
            /**
             * Judge
             * @default true
             */
            judge: boolean;
        };
        /**
         * EvaluationView
         * @description A job as its owner sees it (``GET /v1/evaluations/{id}``).
         */
        EvaluationView: {
            /** Evaluationid */
            evaluationId: string;
            /**
             * Name
             * @default
             */
            name: string;
            /**
             * Status
             * @enum {string}
             */
            status: "queued" | "running" | "completed" | "failed";
            /** Createdat */
            createdAt: number;
            /** Updatedat */
            updatedAt: number;
            /** Questions */
            questions: number;
            /** Configs */
            configs: string[];
            /** Answers */
            answers: number;
            /**
             * Done
             * @default 0
             */
            done: number;
            /**
             * Judge
             * @default
             */
            judge: string;
            /** Summary */
            summary?: {
                [key: string]: {
                    [key: string]: number | null;
                };
            };
            /**
             * Error
             * @default null
             */
            error: string | null;
            usage?: components["schemas"]["Usage"];
            /**
             * Report
             * @default null
             */
            report: string | null;
        };
        /**
         * GraphSettings
         * @description SharePoint Online or OneDrive through Microsoft Graph: one drive (a document library), or one
         *     folder of it. Credentials (an app registration's ``clientId`` and ``clientSecret``) are the
         *     source's secret; ``tenant`` is the Microsoft Entra tenant (id or domain) they belong to.
         */
        GraphSettings: {
            /** Tenant */
            tenant: string;
            /** Driveid */
            driveId: string;
            /**
             * Folder
             * @default
             */
            folder: string;
            /**
             * Graphurl
             * @default https://graph.microsoft.com/v1.0
             */
            graphUrl: string;
            /**
             * Loginurl
             * @default https://login.microsoftonline.com
             */
            loginUrl: string;
        };
        /**
         * Grounding
         * @description How well the final answer is supported by the chunks it cites.
         *
         *     ``status``: ``scored``; ``no_citations`` (nothing to check: the answer cites no chunk);
         *     ``unavailable`` (the scorer failed: the answer stands, a ``grounding_unavailable`` warning says
         *     why); ``off`` (the deployment turned grounding off). ``score``: the mean support of the checked
         *     sentences. ``unchecked``: cited sentences past the deployment's cap; ``uncited``: sentences with no
         *     citation (never checked: the ``ungrounded_answer`` warning covers an answer that cites nothing).
         */
        Grounding: {
            /**
             * Status
             * @enum {string}
             */
            status: "scored" | "no_citations" | "unavailable" | "off";
            /** Scorer */
            scorer: string;
            /**
             * Score
             * @default null
             */
            score: number | null;
            /** Sentences */
            sentences?: components["schemas"]["SentenceGrounding"][];
            /**
             * Unchecked
             * @default 0
             */
            unchecked: number;
            /**
             * Uncited
             * @default 0
             */
            uncited: number;
        };
        /**
         * GroundingEvidence
         * @description A sentence of a cited chunk that decided a verdict (``sentence``: its index in the chunk).
         */
        GroundingEvidence: {
            /** Chunkid */
            chunkId: string;
            /** Sentence */
            sentence: number;
            /** Text */
            text: string;
        };
        /** HostingQueryView */
        HostingQueryView: {
            /** Round */
            round: number;
            /**
             * Type
             * @enum {string}
             */
            type: "semantic" | "keyword" | "hybrid";
            /** Query */
            query: string;
            /** Hits */
            hits: number;
        };
        /** HostingRoundView */
        HostingRoundView: {
            /** Round */
            round: number;
            /** Newchunks */
            newChunks: number;
            /** Cananswer */
            canAnswer: boolean | null;
            /** Tokens */
            tokens: number;
        };
        /**
         * HostingSearchRequest
         * @description ``POST /v1/hosting-search``: the best chunks for a conversation, found by a self-evaluating
         *     multi-query loop; no generated answer.
         */
        HostingSearchRequest: {
            /** Messages */
            messages?: components["schemas"]["RequestMessage"][];
            /** Query */
            query?: string | null;
            /** Namespaces */
            namespaces?: string[];
            /**
             * Maxevals
             * @default 3
             */
            maxEvals: number;
            /**
             * Tokenbudget
             * @default 4096
             */
            tokenBudget: number;
            /**
             * Topk
             * @default 15
             */
            topK: number;
            /**
             * Mode
             * @default accurate
             * @enum {string}
             */
            mode: "accurate" | "fast";
            /**
             * Filter
             * @description A metadata filter (see the README's Filters): one operator object, e.g. {"andAll": [{"equals": {"key": "product", "value": "kettle"}}, {"greaterThanOrEquals": {"key": "year", "value": 2024}}]}. Operators: equals, notEquals, greaterThan, greaterThanOrEquals, lessThan, lessThanOrEquals, in, notIn, startsWith, listContains, exists, andAll, orAll, not; at most 8 levels and 64 conditions. Applied inside the store, out of band: no model can change it.
             */
            filter?: ({
                equals: {
                    key: string;
                    value: string | number | boolean;
                };
            } | {
                notEquals: {
                    key: string;
                    value: string | number | boolean;
                };
            } | {
                greaterThan: {
                    key: string;
                    value: string | number | boolean;
                };
            } | {
                greaterThanOrEquals: {
                    key: string;
                    value: string | number | boolean;
                };
            } | {
                lessThan: {
                    key: string;
                    value: string | number | boolean;
                };
            } | {
                lessThanOrEquals: {
                    key: string;
                    value: string | number | boolean;
                };
            } | {
                startsWith: {
                    key: string;
                    value: string | number | boolean;
                };
            } | {
                listContains: {
                    key: string;
                    value: string | number | boolean;
                };
            } | {
                in: {
                    key: string;
                    value: (string | number | boolean)[];
                };
            } | {
                notIn: {
                    key: string;
                    value: (string | number | boolean)[];
                };
            } | {
                exists: {
                    key: string;
                };
            } | {
                andAll: Record<string, never>[];
            } | {
                orAll: Record<string, never>[];
            } | {
                /** @description A filter (this same shape). */
                not: Record<string, never>;
            }) | null;
        };
        /** HostingSearchResponse */
        HostingSearchResponse: {
            /** Totalqueries */
            totalQueries: number;
            /** Queries */
            queries: components["schemas"]["HostingQueryView"][];
            /** Rounds */
            rounds: components["schemas"]["HostingRoundView"][];
            /** Chunks */
            chunks: components["schemas"]["ChunkView"][];
            /**
             * Exitreason
             * @enum {string}
             */
            exitReason: "can_answer" | "token_budget" | "max_evals" | "no_new_queries" | "error";
            /** Model */
            model: string;
            usage: components["schemas"]["Usage"];
            /** Runid */
            runId: string;
            /** Warnings */
            warnings: components["schemas"]["WarningView"][];
            rerank?: components["schemas"]["RerankView"] | null;
            plan?: components["schemas"]["QueryPlan"] | null;
            /**
             * Replayed
             * @default false
             */
            replayed: boolean;
        };
        /**
         * IdentityProviderBody
         * @description The tenant's identity provider: whose tokens (JWTs) act as the tenant's end users.
         */
        IdentityProviderBody: {
            /** Issuer */
            issuer: string;
            /** Audiences */
            audiences: string[];
            /** Jwks */
            jwks?: {
                [key: string]: unknown;
            }[];
            /**
             * Jwksuri
             * @default
             */
            jwksUri: string;
            /**
             * Userclaim
             * @default sub
             */
            userClaim: string;
            /**
             * Groupsclaim
             * @default groups
             */
            groupsClaim: string;
            /** Algorithms */
            algorithms?: string[];
            /** Scopes */
            scopes?: ("chat" | "search")[];
            /** Namespaces */
            namespaces?: string[];
            /**
             * Maxlifetime
             * @default 86400
             */
            maxLifetime: number;
            /**
             * Leeway
             * @default 60
             */
            leeway: number;
        };
        /** IdentityProviderDeleted */
        IdentityProviderDeleted: {
            /** Deleted */
            deleted: boolean;
        };
        /** IdentityProviderView */
        IdentityProviderView: {
            /** Issuer */
            issuer: string;
            /** Audiences */
            audiences: string[];
            /** Jwks */
            jwks: {
                [key: string]: unknown;
            }[];
            /** Jwksuri */
            jwksUri: string;
            /** Userclaim */
            userClaim: string;
            /** Groupsclaim */
            groupsClaim: string;
            /** Algorithms */
            algorithms: string[];
            /** Scopes */
            scopes: string[];
            /** Namespaces */
            namespaces: string[];
            /** Maxlifetime */
            maxLifetime: number;
            /** Leeway */
            leeway: number;
        };
        /**
         * IngestionUsage
         * @description Indexing in the period: settled document versions, their chunks and pages, and the tokens
         *     embedded for them (chunks whose vectors were reused cost none).
         */
        IngestionUsage: {
            /**
             * Documents
             * @default 0
             */
            documents: number;
            /**
             * Chunks
             * @default 0
             */
            chunks: number;
            /**
             * Pages
             * @default 0
             */
            pages: number;
            /**
             * Embeddedtokens
             * @default 0
             */
            embeddedTokens: number;
        };
        /** KeyList */
        KeyList: {
            /** Keys */
            keys: components["schemas"]["KeyView"][];
        };
        /**
         * KeyView
         * @description Never the key or its hash.
         */
        KeyView: {
            /** Keyid */
            keyId: string;
            /** Name */
            name: string;
            /** Scopes */
            scopes: string[];
            /** Namespaces */
            namespaces: string[];
            /**
             * Assertuser
             * @default false
             */
            assertUser: boolean;
            /**
             * Requireuser
             * @default false
             */
            requireUser: boolean;
            limits?: components["schemas"]["Limits"] | null;
            /** Createdat */
            createdAt: string;
            /** Lastusedat */
            lastUsedAt: string | null;
            /** Revoked */
            revoked: boolean;
        };
        /**
         * Limits
         * @description Limits set on a tenant or a key; a field left ``None`` is not set here (a tenant's: the
         *     deployment's default; a key's: only the tenant's limit applies). Camel-case in the API.
         */
        Limits: {
            /** Requestspersecond */
            requestsPerSecond?: number | null;
            /** Burst */
            burst?: number | null;
            /** Maxconcurrentruns */
            maxConcurrentRuns?: number | null;
        };
        /**
         * MetricDifference
         * @description B minus A on one metric, over the questions both scored (paired), with a paired bootstrap 95 %
         *     confidence interval; ``significant``: the interval excludes 0.
         */
        MetricDifference: {
            /** Metric */
            metric: string;
            /** N */
            n: number;
            /**
             * Amean
             * @default null
             */
            aMean: number | null;
            /**
             * Bmean
             * @default null
             */
            bMean: number | null;
            /**
             * Difference
             * @default null
             */
            difference: number | null;
            /**
             * Cilow
             * @default null
             */
            ciLow: number | null;
            /**
             * Cihigh
             * @default null
             */
            ciHigh: number | null;
            /**
             * Significant
             * @default false
             */
            significant: boolean;
        };
        /**
         * MetricSummary
         * @description One metric under one configuration: its mean over the answers that have it, with a bootstrap
         *     95 % confidence interval, and its distribution (``histogram``: counts in ten equal bins of [0, 1]).
         */
        MetricSummary: {
            /** Metric */
            metric: string;
            /** N */
            n: number;
            /**
             * Mean
             * @default null
             */
            mean: number | null;
            /**
             * Cilow
             * @default null
             */
            ciLow: number | null;
            /**
             * Cihigh
             * @default null
             */
            ciHigh: number | null;
            /** Histogram */
            histogram?: number[];
        };
        /** NamespaceDeleted */
        NamespaceDeleted: {
            /** Namespaceid */
            namespaceId: string;
            /**
             * Deleted
             * @default true
             */
            deleted: boolean;
        };
        /** NamespaceList */
        NamespaceList: {
            /** Namespaces */
            namespaces: components["schemas"]["NamespaceView"][];
        };
        /** NamespacePatch */
        NamespacePatch: {
            /** Description */
            description?: string | null;
            /** Default */
            default?: boolean | null;
            /** Systemprompt */
            systemPrompt?: string | null;
            /**
             * Chunkspersearch
             * @description Chunks one chat search shows the model; 0: the deployment's.
             */
            chunksPerSearch?: number | null;
            /**
             * Metadataschema
             * @description Metadata keys to declare, with their types; adds keys (a key already typed otherwise is a 409 metadata_type_clash). Declare dates: a date is never inferred.
             */
            metadataSchema?: {
                [key: string]: "string" | "number" | "boolean" | "string_list" | "date";
            } | null;
            /** Embeddingmodel */
            embeddingModel?: string | null;
            /** Chunktokens */
            chunkTokens?: number | null;
            /** Chunkoverlaptokens */
            chunkOverlapTokens?: number | null;
            /**
             * Chunking
             * @description How documents are cut: fixed (token-sized chunks with a sentence window), hierarchical (small chunks searched, their parent passage read), semantic (chunks closed where adjacent sentences' meaning moves on); empty: the deployment's. A change starts a reindex.
             */
            chunking?: ("fixed" | "hierarchical" | "semantic") | "" | null;
            /**
             * Parentchunktokens
             * @description The hierarchical strategy's parent size in tokens, at least the chunk size (0: four chunks').
             */
            parentChunkTokens?: number | null;
        };
        /** NamespaceView */
        NamespaceView: {
            /** Namespaceid */
            namespaceId: string;
            /** Description */
            description: string;
            /** Default */
            default: boolean;
            /** Embeddingmodel */
            embeddingModel: string;
            /** Systemprompt */
            systemPrompt: string;
            /** Chunkspersearch */
            chunksPerSearch: number;
            /** Createdat */
            createdAt: string;
            /** Metadataschema */
            metadataSchema?: {
                [key: string]: string;
            };
            /**
             * Generation
             * @default 1
             */
            generation: number;
            /**
             * Chunktokens
             * @default 0
             */
            chunkTokens: number;
            /**
             * Chunkoverlaptokens
             * @default 0
             */
            chunkOverlapTokens: number;
            /**
             * Chunking
             * @default
             */
            chunking: string;
            /**
             * Parentchunktokens
             * @default 0
             */
            parentChunkTokens: number;
            rebuild?: components["schemas"]["RebuildView"] | null;
        };
        /** NewKey */
        NewKey: {
            /**
             * Name
             * @default
             */
            name: string;
            /** Scopes */
            scopes: ("chat" | "search" | "ingest" | "admin")[];
            /** Namespaces */
            namespaces?: string[];
            /**
             * Assertuser
             * @default false
             */
            assertUser: boolean;
            /**
             * Requireuser
             * @default false
             */
            requireUser: boolean;
            limits?: components["schemas"]["Limits"] | null;
        };
        /** NewKeyView */
        NewKeyView: {
            /** Keyid */
            keyId: string;
            /** Name */
            name: string;
            /** Scopes */
            scopes: string[];
            /** Namespaces */
            namespaces: string[];
            /**
             * Assertuser
             * @default false
             */
            assertUser: boolean;
            /**
             * Requireuser
             * @default false
             */
            requireUser: boolean;
            limits?: components["schemas"]["Limits"] | null;
            /** Createdat */
            createdAt: string;
            /** Lastusedat */
            lastUsedAt: string | null;
            /** Revoked */
            revoked: boolean;
            /** Apikey */
            apiKey: string;
        };
        /** NewNamespace */
        NewNamespace: {
            /** Namespaceid */
            namespaceId: string;
            /**
             * Description
             * @default
             */
            description: string;
            /**
             * Default
             * @default false
             */
            default: boolean;
        };
        /** NewSource */
        NewSource: {
            /**
             * Kind
             * @enum {string}
             */
            kind: "web" | "confluence" | "graph";
            /**
             * Name
             * @default
             */
            name: string;
            web?: components["schemas"]["WebSettings"] | null;
            confluence?: components["schemas"]["ConfluenceSettings"] | null;
            graph?: components["schemas"]["GraphSettings"] | null;
            /** Credentials */
            credentials?: {
                [key: string]: string;
            } | null;
            /**
             * Everyminutes
             * @default 0
             */
            everyMinutes: number;
        };
        /** NewWebhook */
        NewWebhook: {
            /** Url */
            url: string;
            /** Eventtypes */
            eventTypes?: ("document.indexed" | "document.failed" | "document.deleted" | "namespace.reindexed" | "usage.quota_threshold" | "run.completed" | "run.failed" | "run.cancelled")[];
            /**
             * Description
             * @default
             */
            description: string;
        };
        /**
         * NewWebhookView
         * @description The creation's (or a rotation's) answer: the signing secret, shown this once.
         */
        NewWebhookView: {
            /** Webhookid */
            webhookId: string;
            /** Url */
            url: string;
            /** Eventtypes */
            eventTypes: string[];
            /** Description */
            description: string;
            /** Createdat */
            createdAt: string;
            /** Secret */
            secret: string;
        };
        /**
         * PlanCollections
         * @description The collection router's choice (no ``namespaces``, or ``"auto"``), as the ``collections`` event
         *     streamed it.
         */
        PlanCollections: {
            /** Namespaces */
            namespaces: string[];
            /** Reason */
            reason: string;
        };
        /**
         * PlanHop
         * @description One hop of ``chain_of_rag``.
         */
        PlanHop: {
            /**
             * Hop
             * @description From 1.
             */
            hop: number;
            /**
             * Question
             * @description The follow-up question searched.
             */
            question: string;
            /**
             * Answer
             * @description The intermediate answer written from its passages (empty when none was: offline, or a reply
             *     that held no valid JSON).
             */
            answer: string;
            /**
             * Supportingids
             * @description The ids of the chunks that support the answer (the ids the final answer cites).
             */
            supportingIds?: string[];
        };
        /**
         * PlanRound
         * @description One round of a planned loop (``deep_search``, hosting search).
         */
        PlanRound: {
            /**
             * Round
             * @description From 1.
             */
            round: number;
            /**
             * Queries
             * @description The round's queries, as searched.
             */
            queries: string[];
            /**
             * Kept
             * @description ``deep_search``: the passages of the round judged to help (kept for the answer).
             * @default null
             */
            kept: number | null;
            /**
             * Newchunks
             * @description Hosting search: the chunks the round added to the pool.
             * @default null
             */
            newChunks: number | null;
            /**
             * Cananswer
             * @description Hosting search: the planner's verdict after the round (null: not evaluated).
             * @default null
             */
            canAnswer: boolean | null;
        };
        /**
         * PlanRoute
         * @description The RAG router's choice (``agent: "auto"``), as the ``route`` event streamed it.
         */
        PlanRoute: {
            /** Agent */
            agent: string;
            /** Reason */
            reason: string;
            /**
             * Fallback
             * @default false
             */
            fallback: boolean;
        };
        /**
         * PlannedRetrieval
         * @description One search as it ran.
         */
        PlannedRetrieval: {
            /**
             * Step
             * @description The agent step that issued it, from 1: the model turn (tool loop), the round (``deep_search``,
             *     hosting search) or the hop (``chain_of_rag``).
             */
            step: number;
            /**
             * Issuedby
             * @description ``tool_loop``: the model's own ``search`` call; else the agent that searched for the model.
             * @enum {string}
             */
            issuedBy: "tool_loop" | "deep_search" | "chain_of_rag" | "hosting_search";
            /**
             * Query
             * @description The text searched (cut to 1,000 characters).
             */
            query: string;
            /**
             * Mode
             * @description The mode that ran (a store without keyword search runs ``semantic``).
             * @enum {string}
             */
            mode: "semantic" | "keyword" | "hybrid";
            /**
             * Namespaces
             * @description The namespaces searched.
             */
            namespaces: string[];
            /**
             * Filter
             * @description The model's own narrowing (a ``search`` call's ``filter``, as it wrote it; ANDed with the
             *     request's filter, which is not repeated here); null when it gave none.
             * @default null
             */
            filter: {
                [key: string]: unknown;
            } | null;
            /**
             * K
             * @description Hits kept (after the rerank, when there is one).
             */
            k: number;
            /**
             * Candidates
             * @description Hits fetched for the ``k`` to be chosen from.
             */
            candidates: number;
            /**
             * Hits
             * @description Hits found (0 when the search failed).
             */
            hits: number;
            /**
             * Rerank
             * @description The reranker that ordered the hits; null when not reranked (``fast``, ``keyword``, no reranker, or
             *     a failed rerank that kept fused order, with a ``rerank_failed`` warning).
             * @default null
             */
            rerank: string | null;
            /**
             * Ms
             * @description Wall time of the search, in milliseconds.
             */
            ms: number;
            /**
             * Error
             * @description The error code when the search failed (``invalid_request``: the model's filter or query was
             *     refused, a tool error it can correct; any other ended the run).
             * @default null
             */
            error: string | null;
        };
        /**
         * QueryPlan
         * @description How a run searched: the choices made, the agent's steps and every retrieval, in order.
         */
        QueryPlan: {
            /**
             * Agent
             * @description The agent that ran (``hosting_search`` for hosting search); the requested one when the run
             *     stopped before an agent ran (``auto`` when it stopped before routing).
             */
            agent: string;
            /**
             * @description The RAG router's choice; null when the request named the agent.
             * @default null
             */
            route: components["schemas"]["PlanRoute"] | null;
            /**
             * @description The collection router's choice; null when the request named the namespaces.
             * @default null
             */
            collections: components["schemas"]["PlanCollections"] | null;
            /**
             * Subquestions
             * @description ``deep_search``: the sub-questions the question was split into.
             */
            subQuestions?: string[];
            /**
             * Rounds
             * @description ``deep_search`` and hosting search: each round's queries and what came of them.
             */
            rounds?: components["schemas"]["PlanRound"][];
            /**
             * Hops
             * @description ``chain_of_rag``: each hop's question and intermediate answer.
             */
            hops?: components["schemas"]["PlanHop"][];
            /**
             * Retrievals
             * @description Every search of the run, in the order issued (a round's run at once).
             */
            retrievals?: components["schemas"]["PlannedRetrieval"][];
        };
        /**
         * RebuildView
         * @description A generation being built by a reindex (or the last that failed: the served one kept serving).
         */
        RebuildView: {
            /** Generation */
            generation: number;
            /** State */
            state: string;
            /** Embeddingmodel */
            embeddingModel: string;
            /** Chunktokens */
            chunkTokens: number;
            /** Chunkoverlaptokens */
            chunkOverlapTokens: number;
            /**
             * Chunking
             * @default
             */
            chunking: string;
            /**
             * Parentchunktokens
             * @default 0
             */
            parentChunkTokens: number;
            /** Documentsdone */
            documentsDone: number;
            /** Documentstotal */
            documentsTotal: number;
            /** Startedat */
            startedAt: string;
            /**
             * Error
             * @default
             */
            error: string;
        };
        /**
         * ReindexRequest
         * @description Rebuild the namespace with another embedding model and/or chunking (unnamed: kept as they are;
         *     0: the deployment's chunking).
         */
        ReindexRequest: {
            /** Embeddingmodel */
            embeddingModel?: string | null;
            /** Chunktokens */
            chunkTokens?: number | null;
            /** Chunkoverlaptokens */
            chunkOverlapTokens?: number | null;
            /**
             * Chunking
             * @description How documents are cut: fixed (token-sized chunks with a sentence window), hierarchical (small chunks searched, their parent passage read), semantic (chunks closed where adjacent sentences' meaning moves on); empty: the deployment's. A change starts a reindex.
             */
            chunking?: ("fixed" | "hierarchical" | "semantic") | "" | null;
            /**
             * Parentchunktokens
             * @description The hierarchical strategy's parent size in tokens, at least the chunk size (0: four chunks').
             */
            parentChunkTokens?: number | null;
        };
        /**
         * RequestMessage
         * @description One turn of the conversation as the client sends it (tool turns are the server's own).
         */
        RequestMessage: {
            /**
             * Role
             * @enum {string}
             */
            role: "system" | "user" | "assistant";
            /**
             * Content
             * @default
             */
            content: string;
        };
        /** RerankView */
        RerankView: {
            /** Reranker */
            reranker: string;
            /** Fellback */
            fellBack: boolean;
        };
        /**
         * Route
         * @description Which agent answers a run: streamed when the request asked for ``agent: "auto"``.
         */
        Route: {
            /**
             * Type
             * @default route
             * @constant
             */
            type: "route";
            /** Agent */
            agent: string;
            /** Reason */
            reason: string;
            /**
             * Fallback
             * @default false
             */
            fallback: boolean;
        };
        /**
         * RunAccepted
         * @description ``POST /v1/chat`` with ``background: true``: 202, the run queued.
         */
        RunAccepted: {
            /** Runid */
            runId: string;
            /**
             * Status
             * @enum {string}
             */
            status: "queued" | "running" | "completed" | "failed" | "cancelled";
            /** Events */
            events: string;
        };
        /**
         * RunError
         * @description The run stopped on an infrastructure error (model or store down); a final event follows.
         */
        RunError: {
            /**
             * Type
             * @default error
             * @constant
             */
            type: "error";
            /** Code */
            code: string;
            /** Message */
            message: string;
        };
        /**
         * RunEvent
         * @description One Server-Sent Event's `data`.
         */
        RunEvent: components["schemas"]["AnswerDelta"] | components["schemas"]["ToolStarted"] | components["schemas"]["ToolFinished"] | components["schemas"]["Sources"] | components["schemas"]["Warning"] | components["schemas"]["Route"] | components["schemas"]["Collections"] | components["schemas"]["RunError"] | components["schemas"]["RunFinished"];
        /** RunFinished */
        RunFinished: {
            /**
             * Type
             * @default final
             * @constant
             */
            type: "final";
            /** Runid */
            runId: string;
            /** Exitreason */
            exitReason: string;
            /** Answer */
            answer: string;
            usage: components["schemas"]["Usage"];
            /** @default null */
            grounding: components["schemas"]["Grounding"] | null;
            /** @default null */
            plan: components["schemas"]["QueryPlan"] | null;
            /**
             * Conversationid
             * @default null
             */
            conversationId: string | null;
            /**
             * Replayed
             * @default false
             */
            replayed: boolean;
        };
        /**
         * RunView
         * @description ``GET /v1/runs/{id}``: where a run stands; ``result`` is its final event once it ended.
         */
        RunView: {
            /** Runid */
            runId: string;
            /**
             * Status
             * @enum {string}
             */
            status: "queued" | "running" | "completed" | "failed" | "cancelled";
            /** Background */
            background: boolean;
            /** Createdat */
            createdAt: number;
            /** Lasteventid */
            lastEventId: number;
            /** @default null */
            result: components["schemas"]["RunFinished"] | null;
        };
        /** Scores */
        Scores: {
            /**
             * Semanticrank
             * @default null
             */
            semanticRank: number | null;
            /**
             * Semanticscore
             * @default null
             */
            semanticScore: number | null;
            /**
             * Keywordrank
             * @default null
             */
            keywordRank: number | null;
            /**
             * Keywordscore
             * @default null
             */
            keywordScore: number | null;
            /**
             * Fusedscore
             * @default null
             */
            fusedScore: number | null;
            /**
             * Rerankscore
             * @default null
             */
            rerankScore: number | null;
        };
        /**
         * SearchRequest
         * @description ``POST /v1/namespaces/{ns}/search``.
         */
        SearchRequest: {
            /** Query */
            query: string;
            /**
             * Mode
             * @default hybrid
             * @enum {string}
             */
            mode: "semantic" | "keyword" | "hybrid";
            /**
             * K
             * @default 10
             */
            k: number;
            /**
             * Rerank
             * @default false
             */
            rerank: boolean;
            /** Fusion */
            fusion?: ("rrf" | "convex" | "adaptive") | null;
            /**
             * Filter
             * @description A metadata filter (see the README's Filters): one operator object, e.g. {"andAll": [{"equals": {"key": "product", "value": "kettle"}}, {"greaterThanOrEquals": {"key": "year", "value": 2024}}]}. Operators: equals, notEquals, greaterThan, greaterThanOrEquals, lessThan, lessThanOrEquals, in, notIn, startsWith, listContains, exists, andAll, orAll, not; at most 8 levels and 64 conditions. Applied inside the store, out of band: no model can change it.
             */
            filter?: ({
                equals: {
                    key: string;
                    value: string | number | boolean;
                };
            } | {
                notEquals: {
                    key: string;
                    value: string | number | boolean;
                };
            } | {
                greaterThan: {
                    key: string;
                    value: string | number | boolean;
                };
            } | {
                greaterThanOrEquals: {
                    key: string;
                    value: string | number | boolean;
                };
            } | {
                lessThan: {
                    key: string;
                    value: string | number | boolean;
                };
            } | {
                lessThanOrEquals: {
                    key: string;
                    value: string | number | boolean;
                };
            } | {
                startsWith: {
                    key: string;
                    value: string | number | boolean;
                };
            } | {
                listContains: {
                    key: string;
                    value: string | number | boolean;
                };
            } | {
                in: {
                    key: string;
                    value: (string | number | boolean)[];
                };
            } | {
                notIn: {
                    key: string;
                    value: (string | number | boolean)[];
                };
            } | {
                exists: {
                    key: string;
                };
            } | {
                andAll: Record<string, never>[];
            } | {
                orAll: Record<string, never>[];
            } | {
                /** @description A filter (this same shape). */
                not: Record<string, never>;
            }) | null;
        };
        /** SearchResponse */
        SearchResponse: {
            /**
             * Mode
             * @enum {string}
             */
            mode: "semantic" | "keyword" | "hybrid";
            /** Hits */
            hits: components["schemas"]["ChunkView"][];
            /** Warnings */
            warnings: components["schemas"]["WarningView"][];
            usage: components["schemas"]["Usage"];
            /** Runid */
            runId: string;
            rerank?: components["schemas"]["RerankView"] | null;
            /**
             * Replayed
             * @default false
             */
            replayed: boolean;
        };
        /**
         * SentenceGrounding
         * @description One cited sentence of the answer, checked against the chunks it cites.
         */
        SentenceGrounding: {
            /** Text */
            text: string;
            /** Citations */
            citations: string[];
            /**
             * Label
             * @enum {string}
             */
            label: "supported" | "contradicted" | "not_enough_info";
            /** Score */
            score: number;
            /** Evidence */
            evidence?: components["schemas"]["GroundingEvidence"][];
        };
        /** SourceList */
        SourceList: {
            /** Sources */
            sources: components["schemas"]["SourceView"][];
        };
        /** SourcePatch */
        SourcePatch: {
            /** Name */
            name?: string | null;
            web?: components["schemas"]["WebSettings"] | null;
            confluence?: components["schemas"]["ConfluenceSettings"] | null;
            graph?: components["schemas"]["GraphSettings"] | null;
            /** Credentials */
            credentials?: {
                [key: string]: string;
            } | null;
            /** Everyminutes */
            everyMinutes?: number | null;
        };
        /**
         * SourceRef
         * @description A chunk the run was shown: enough to read it in a report, not its whole text.
         */
        SourceRef: {
            /** Id */
            id: string;
            /** Namespace */
            namespace: string;
            /** Documentid */
            documentId: string;
            /**
             * Filename
             * @default
             */
            filename: string;
            /**
             * Cited
             * @default false
             */
            cited: boolean;
            /**
             * Gold
             * @default false
             */
            gold: boolean;
            /**
             * Excerpt
             * @default
             */
            excerpt: string;
        };
        /** SourceView */
        SourceView: {
            /** Sourceid */
            sourceId: string;
            /** Kind */
            kind: string;
            /** Name */
            name: string;
            /** Settings */
            settings: {
                [key: string]: unknown;
            };
            /** Everyminutes */
            everyMinutes: number;
            /** Status */
            status: string;
            /** Run */
            run: number;
            counts: components["schemas"]["SyncCountsView"];
            /** Lasterror */
            lastError: string;
            /** Startedat */
            startedAt: string | null;
            /** Finishedat */
            finishedAt: string | null;
            /** Nextrunat */
            nextRunAt: string | null;
            /** Createdat */
            createdAt: string;
            /** Hascredentials */
            hasCredentials: boolean;
        };
        /** Sources */
        Sources: {
            /**
             * Type
             * @default sources
             * @constant
             */
            type: "sources";
            /** Chunks */
            chunks: components["schemas"]["ChunkView"][];
        };
        /** SyncCountsView */
        SyncCountsView: {
            /** Listed */
            listed: number;
            /** Indexed */
            indexed: number;
            /** Relabelled */
            relabelled: number;
            /** Unchanged */
            unchanged: number;
            /** Deleted */
            deleted: number;
            /** Failed */
            failed: number;
        };
        /** SyncRequest */
        SyncRequest: {
            /**
             * Full
             * @default false
             */
            full: boolean;
        };
        /** ToolFinished */
        ToolFinished: {
            /**
             * Type
             * @default tool_end
             * @constant
             */
            type: "tool_end";
            /** Callid */
            callId: string;
            /** Tool */
            tool: string;
            /** Label */
            label: string;
            /** Hits */
            hits: number;
            /**
             * Error
             * @default null
             */
            error: string | null;
        };
        /** ToolStarted */
        ToolStarted: {
            /**
             * Type
             * @default tool_start
             * @constant
             */
            type: "tool_start";
            /** Callid */
            callId: string;
            /** Tool */
            tool: string;
            /** Label */
            label: string;
        };
        /** TurnView */
        TurnView: {
            /** Runid */
            runId: string;
            /** Messages */
            messages: {
                [key: string]: string;
            }[];
            /** Answer */
            answer: string;
            /** Withheld */
            withheld: boolean;
            /** Createdat */
            createdAt: string;
            usage: components["schemas"]["Usage"];
        };
        /** Usage */
        Usage: {
            /**
             * Retrievals
             * @default 0
             */
            retrievals: number;
            /**
             * Reranks
             * @default 0
             */
            reranks: number;
            /**
             * Llminputtokens
             * @default 0
             */
            llmInputTokens: number;
            /**
             * Llmoutputtokens
             * @default 0
             */
            llmOutputTokens: number;
            /**
             * Embeddedtokens
             * @default 0
             */
            embeddedTokens: number;
            /**
             * Pages
             * @default 0
             */
            pages: number;
            /**
             * Llmcachedinputtokens
             * @default 0
             */
            llmCachedInputTokens: number;
        };
        /** UsageReport */
        UsageReport: {
            /** Period */
            period: string;
            /** Runs */
            runs: number;
            usage: components["schemas"]["Usage"];
            ingestion?: components["schemas"]["IngestionUsage"];
            limits?: components["schemas"]["Limits"];
            /**
             * Throttled
             * @default 0
             */
            throttled: number;
        };
        /** Warning */
        Warning: {
            /**
             * Type
             * @default warning
             * @constant
             */
            type: "warning";
            /** Code */
            code: string;
            /** Message */
            message: string;
            /** Details */
            details?: {
                [key: string]: unknown;
            };
        };
        /** WarningView */
        WarningView: {
            /** Code */
            code: string;
            /** Message */
            message: string;
            /** Details */
            details?: {
                [key: string]: unknown;
            };
        };
        /**
         * WebSettings
         * @description A website: pages reached from the seeds and sitemaps, on the seeds' own hosts.
         *
         *     ``include``/``exclude`` are shell-style patterns (``*`` any run of characters, ``?`` one) matched
         *     against a URL's path and query (``/docs/*``); a URL is crawled when it matches an include (all,
         *     when none is given) and no exclude. ``robots.txt`` is always obeyed.
         */
        WebSettings: {
            /** Seeds */
            seeds: string[];
            /** Sitemaps */
            sitemaps?: string[];
            /** Include */
            include?: string[];
            /** Exclude */
            exclude?: string[];
            /**
             * Maxdepth
             * @default 5
             */
            maxDepth: number;
            /**
             * Maxpages
             * @default 500
             */
            maxPages: number;
            /**
             * Maxpagebytes
             * @default 10485760
             */
            maxPageBytes: number;
        };
        /** WebhookList */
        WebhookList: {
            /** Webhooks */
            webhooks: components["schemas"]["WebhookView"][];
        };
        /** WebhookView */
        WebhookView: {
            /** Webhookid */
            webhookId: string;
            /** Url */
            url: string;
            /** Eventtypes */
            eventTypes: string[];
            /** Description */
            description: string;
            /** Createdat */
            createdAt: string;
        };
    };
    responses: never;
    parameters: never;
    requestBodies: never;
    headers: never;
    pathItems: never;
}
export type $defs = Record<string, never>;
export interface operations {
    chat: {
        parameters: {
            query?: never;
            header?: {
                /** @description The end user this request acts for (documents' access lists apply). Only with a key created with `assertUser` (else 403); a key with `requireUser` must send it. */
                "Ragline-User-Id"?: string;
                /** @description The end user's groups, comma-separated (at most 100), with Ragline-User-Id. */
                "Ragline-User-Groups"?: string;
                /** @description Names the run: a retry with the same key and body replays the recorded result instead of running (and charging) again; another body is a 422. */
                "Idempotency-Key"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["ChatRequest"];
            };
        };
        responses: {
            /** @description `stream: true` (default): Server-Sent Events, each `event: <type>` with the event as JSON `data`, ending with `final`. `stream: false`: the whole run as one body. */
            200: {
                headers: {
                    /** @description The run's id (its events' run). */
                    "Ragline-Run-Id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "text/event-stream": components["schemas"]["ChatEvent"];
                    "application/json": components["schemas"]["ChatResponse"];
                };
            };
            /** @description `background: true`: the run is queued and goes on without the client; read it at `/v1/runs/{runId}` and its events at `/v1/runs/{runId}/events`. */
            202: {
                headers: {
                    /** @description The run's id (its events' run). */
                    "Ragline-Run-Id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["RunAccepted"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            405: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            429: {
                headers: {
                    /** @description Whole seconds until the tenant's or key's limit admits a request again (`rate_limited`, `too_many_runs`); absent on a quota refusal. */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            502: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    listConversations: {
        parameters: {
            query?: never;
            header?: {
                /** @description The end user this request acts for (documents' access lists apply). Only with a key created with `assertUser` (else 403); a key with `requireUser` must send it. */
                "Ragline-User-Id"?: string;
                /** @description The end user's groups, comma-separated (at most 100), with Ragline-User-Id. */
                "Ragline-User-Groups"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The conversations. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ConversationList"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            405: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            429: {
                headers: {
                    /** @description Whole seconds until the tenant's or key's limit admits a request again (`rate_limited`, `too_many_runs`); absent on a quota refusal. */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            502: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    getConversation: {
        parameters: {
            query?: never;
            header?: {
                /** @description The end user this request acts for (documents' access lists apply). Only with a key created with `assertUser` (else 403); a key with `requireUser` must send it. */
                "Ragline-User-Id"?: string;
                /** @description The end user's groups, comma-separated (at most 100), with Ragline-User-Id. */
                "Ragline-User-Groups"?: string;
            };
            path: {
                conversation_id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The conversation. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ConversationView"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            405: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            429: {
                headers: {
                    /** @description Whole seconds until the tenant's or key's limit admits a request again (`rate_limited`, `too_many_runs`); absent on a quota refusal. */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            502: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    deleteConversation: {
        parameters: {
            query?: never;
            header?: {
                /** @description The end user this request acts for (documents' access lists apply). Only with a key created with `assertUser` (else 403); a key with `requireUser` must send it. */
                "Ragline-User-Id"?: string;
                /** @description The end user's groups, comma-separated (at most 100), with Ragline-User-Id. */
                "Ragline-User-Groups"?: string;
            };
            path: {
                conversation_id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Deleted. */
            204: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description An error, in the one shape (`error.code` says which). */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            405: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            429: {
                headers: {
                    /** @description Whole seconds until the tenant's or key's limit admits a request again (`rate_limited`, `too_many_runs`); absent on a quota refusal. */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            502: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    listEvaluations: {
        parameters: {
            query?: never;
            header?: {
                /** @description The end user this request acts for (documents' access lists apply). Only with a key created with `assertUser` (else 403); a key with `requireUser` must send it. */
                "Ragline-User-Id"?: string;
                /** @description The end user's groups, comma-separated (at most 100), with Ragline-User-Id. */
                "Ragline-User-Groups"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The jobs. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["EvaluationList"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            405: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            429: {
                headers: {
                    /** @description Whole seconds until the tenant's or key's limit admits a request again (`rate_limited`, `too_many_runs`); absent on a quota refusal. */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            502: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    createEvaluation: {
        parameters: {
            query?: never;
            header?: {
                /** @description The end user this request acts for (documents' access lists apply). Only with a key created with `assertUser` (else 403); a key with `requireUser` must send it. */
                "Ragline-User-Id"?: string;
                /** @description The end user's groups, comma-separated (at most 100), with Ragline-User-Id. */
                "Ragline-User-Groups"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["EvaluationRequest"];
            };
        };
        responses: {
            /** @description The job, queued. */
            202: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["EvaluationView"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            405: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            429: {
                headers: {
                    /** @description Whole seconds until the tenant's or key's limit admits a request again (`rate_limited`, `too_many_runs`); absent on a quota refusal. */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            502: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    getEvaluation: {
        parameters: {
            query?: never;
            header?: {
                /** @description The end user this request acts for (documents' access lists apply). Only with a key created with `assertUser` (else 403); a key with `requireUser` must send it. */
                "Ragline-User-Id"?: string;
                /** @description The end user's groups, comma-separated (at most 100), with Ragline-User-Id. */
                "Ragline-User-Groups"?: string;
            };
            path: {
                evaluation_id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The job. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["EvaluationView"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            405: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            429: {
                headers: {
                    /** @description Whole seconds until the tenant's or key's limit admits a request again (`rate_limited`, `too_many_runs`); absent on a quota refusal. */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            502: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    getEvaluationReport: {
        parameters: {
            query?: {
                format?: "html" | "json";
            };
            header?: {
                /** @description The end user this request acts for (documents' access lists apply). Only with a key created with `assertUser` (else 403); a key with `requireUser` must send it. */
                "Ragline-User-Id"?: string;
                /** @description The end user's groups, comma-separated (at most 100), with Ragline-User-Id. */
                "Ragline-User-Groups"?: string;
            };
            path: {
                evaluation_id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The report (409 `evaluation_not_complete` before the job completes). */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "text/html": string;
                    "application/json": components["schemas"]["EvaluationReport"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            405: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            429: {
                headers: {
                    /** @description Whole seconds until the tenant's or key's limit admits a request again (`rate_limited`, `too_many_runs`); absent on a quota refusal. */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            502: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    hosting_search_v1_hosting_search_post: {
        parameters: {
            query?: never;
            header?: {
                /** @description The end user this request acts for (documents' access lists apply). Only with a key created with `assertUser` (else 403); a key with `requireUser` must send it. */
                "Ragline-User-Id"?: string;
                /** @description The end user's groups, comma-separated (at most 100), with Ragline-User-Id. */
                "Ragline-User-Groups"?: string;
                /** @description Names the run: a retry with the same key and body replays the recorded result instead of running (and charging) again; another body is a 422. */
                "Idempotency-Key"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["HostingSearchRequest"];
            };
        };
        responses: {
            /** @description Successful Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["HostingSearchResponse"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            405: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            429: {
                headers: {
                    /** @description Whole seconds until the tenant's or key's limit admits a request again (`rate_limited`, `too_many_runs`); absent on a quota refusal. */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            502: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    list_keys_v1_keys_get: {
        parameters: {
            query?: never;
            header?: {
                /** @description The end user this request acts for (documents' access lists apply). Only with a key created with `assertUser` (else 403); a key with `requireUser` must send it. */
                "Ragline-User-Id"?: string;
                /** @description The end user's groups, comma-separated (at most 100), with Ragline-User-Id. */
                "Ragline-User-Groups"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Successful Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["KeyList"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            405: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            429: {
                headers: {
                    /** @description Whole seconds until the tenant's or key's limit admits a request again (`rate_limited`, `too_many_runs`); absent on a quota refusal. */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            502: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    create_key_v1_keys_post: {
        parameters: {
            query?: never;
            header?: {
                /** @description The end user this request acts for (documents' access lists apply). Only with a key created with `assertUser` (else 403); a key with `requireUser` must send it. */
                "Ragline-User-Id"?: string;
                /** @description The end user's groups, comma-separated (at most 100), with Ragline-User-Id. */
                "Ragline-User-Groups"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["NewKey"];
            };
        };
        responses: {
            /** @description Successful Response */
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["NewKeyView"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            405: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            429: {
                headers: {
                    /** @description Whole seconds until the tenant's or key's limit admits a request again (`rate_limited`, `too_many_runs`); absent on a quota refusal. */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            502: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    revoke_key_v1_keys__key_id__delete: {
        parameters: {
            query?: never;
            header?: {
                /** @description The end user this request acts for (documents' access lists apply). Only with a key created with `assertUser` (else 403); a key with `requireUser` must send it. */
                "Ragline-User-Id"?: string;
                /** @description The end user's groups, comma-separated (at most 100), with Ragline-User-Id. */
                "Ragline-User-Groups"?: string;
            };
            path: {
                key_id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Successful Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["KeyView"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            405: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            429: {
                headers: {
                    /** @description Whole seconds until the tenant's or key's limit admits a request again (`rate_limited`, `too_many_runs`); absent on a quota refusal. */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            502: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    list_namespaces_v1_namespaces_get: {
        parameters: {
            query?: never;
            header?: {
                /** @description The end user this request acts for (documents' access lists apply). Only with a key created with `assertUser` (else 403); a key with `requireUser` must send it. */
                "Ragline-User-Id"?: string;
                /** @description The end user's groups, comma-separated (at most 100), with Ragline-User-Id. */
                "Ragline-User-Groups"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Successful Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["NamespaceList"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            405: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            429: {
                headers: {
                    /** @description Whole seconds until the tenant's or key's limit admits a request again (`rate_limited`, `too_many_runs`); absent on a quota refusal. */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            502: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    create_namespace_v1_namespaces_post: {
        parameters: {
            query?: never;
            header?: {
                /** @description The end user this request acts for (documents' access lists apply). Only with a key created with `assertUser` (else 403); a key with `requireUser` must send it. */
                "Ragline-User-Id"?: string;
                /** @description The end user's groups, comma-separated (at most 100), with Ragline-User-Id. */
                "Ragline-User-Groups"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["NewNamespace"];
            };
        };
        responses: {
            /** @description Successful Response */
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["NamespaceView"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            405: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            429: {
                headers: {
                    /** @description Whole seconds until the tenant's or key's limit admits a request again (`rate_limited`, `too_many_runs`); absent on a quota refusal. */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            502: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    get_namespace_v1_namespaces__namespace__get: {
        parameters: {
            query?: never;
            header?: {
                /** @description The end user this request acts for (documents' access lists apply). Only with a key created with `assertUser` (else 403); a key with `requireUser` must send it. */
                "Ragline-User-Id"?: string;
                /** @description The end user's groups, comma-separated (at most 100), with Ragline-User-Id. */
                "Ragline-User-Groups"?: string;
            };
            path: {
                namespace: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Successful Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["NamespaceView"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            405: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            429: {
                headers: {
                    /** @description Whole seconds until the tenant's or key's limit admits a request again (`rate_limited`, `too_many_runs`); absent on a quota refusal. */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            502: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    delete_namespace_v1_namespaces__namespace__delete: {
        parameters: {
            query?: never;
            header?: {
                /** @description The end user this request acts for (documents' access lists apply). Only with a key created with `assertUser` (else 403); a key with `requireUser` must send it. */
                "Ragline-User-Id"?: string;
                /** @description The end user's groups, comma-separated (at most 100), with Ragline-User-Id. */
                "Ragline-User-Groups"?: string;
            };
            path: {
                namespace: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Successful Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["NamespaceDeleted"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            405: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            429: {
                headers: {
                    /** @description Whole seconds until the tenant's or key's limit admits a request again (`rate_limited`, `too_many_runs`); absent on a quota refusal. */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            502: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    update_namespace_v1_namespaces__namespace__patch: {
        parameters: {
            query?: never;
            header?: {
                /** @description The end user this request acts for (documents' access lists apply). Only with a key created with `assertUser` (else 403); a key with `requireUser` must send it. */
                "Ragline-User-Id"?: string;
                /** @description The end user's groups, comma-separated (at most 100), with Ragline-User-Id. */
                "Ragline-User-Groups"?: string;
            };
            path: {
                namespace: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["NamespacePatch"];
            };
        };
        responses: {
            /** @description Successful Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["NamespaceView"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            405: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            429: {
                headers: {
                    /** @description Whole seconds until the tenant's or key's limit admits a request again (`rate_limited`, `too_many_runs`); absent on a quota refusal. */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            502: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    list_documents_v1_namespaces__namespace__documents_get: {
        parameters: {
            query?: never;
            header?: {
                /** @description The end user this request acts for (documents' access lists apply). Only with a key created with `assertUser` (else 403); a key with `requireUser` must send it. */
                "Ragline-User-Id"?: string;
                /** @description The end user's groups, comma-separated (at most 100), with Ragline-User-Id. */
                "Ragline-User-Groups"?: string;
            };
            path: {
                namespace: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Successful Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["DocumentList"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            405: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            429: {
                headers: {
                    /** @description Whole seconds until the tenant's or key's limit admits a request again (`rate_limited`, `too_many_runs`); absent on a quota refusal. */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            502: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    add_text_v1_namespaces__namespace__documents_post: {
        parameters: {
            query?: never;
            header?: {
                /** @description The end user this request acts for (documents' access lists apply). Only with a key created with `assertUser` (else 403); a key with `requireUser` must send it. */
                "Ragline-User-Id"?: string;
                /** @description The end user's groups, comma-separated (at most 100), with Ragline-User-Id. */
                "Ragline-User-Groups"?: string;
            };
            path: {
                namespace: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["AddText"];
            };
        };
        responses: {
            /** @description Successful Response */
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["DocumentView"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            405: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            429: {
                headers: {
                    /** @description Whole seconds until the tenant's or key's limit admits a request again (`rate_limited`, `too_many_runs`); absent on a quota refusal. */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            502: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    get_document_v1_namespaces__namespace__documents__document_id__get: {
        parameters: {
            query?: never;
            header?: {
                /** @description The end user this request acts for (documents' access lists apply). Only with a key created with `assertUser` (else 403); a key with `requireUser` must send it. */
                "Ragline-User-Id"?: string;
                /** @description The end user's groups, comma-separated (at most 100), with Ragline-User-Id. */
                "Ragline-User-Groups"?: string;
            };
            path: {
                namespace: string;
                document_id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Successful Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["DocumentView"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            405: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            429: {
                headers: {
                    /** @description Whole seconds until the tenant's or key's limit admits a request again (`rate_limited`, `too_many_runs`); absent on a quota refusal. */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            502: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    delete_document_v1_namespaces__namespace__documents__document_id__delete: {
        parameters: {
            query?: never;
            header?: {
                /** @description The end user this request acts for (documents' access lists apply). Only with a key created with `assertUser` (else 403); a key with `requireUser` must send it. */
                "Ragline-User-Id"?: string;
                /** @description The end user's groups, comma-separated (at most 100), with Ragline-User-Id. */
                "Ragline-User-Groups"?: string;
            };
            path: {
                namespace: string;
                document_id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Deleted. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["DocumentDeletion"];
                };
            };
            /** @description Deletion started (an S3-sourced document: its object is deleted, chunks follow). */
            202: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["DocumentDeletion"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            405: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            429: {
                headers: {
                    /** @description Whole seconds until the tenant's or key's limit admits a request again (`rate_limited`, `too_many_runs`); absent on a quota refusal. */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            502: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    relabel_document_v1_namespaces__namespace__documents__document_id__patch: {
        parameters: {
            query?: never;
            header?: {
                /** @description The end user this request acts for (documents' access lists apply). Only with a key created with `assertUser` (else 403); a key with `requireUser` must send it. */
                "Ragline-User-Id"?: string;
                /** @description The end user's groups, comma-separated (at most 100), with Ragline-User-Id. */
                "Ragline-User-Groups"?: string;
            };
            path: {
                namespace: string;
                document_id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["DocumentLabels"];
            };
        };
        responses: {
            /** @description Re-labelled. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["DocumentUpdate"];
                };
            };
            /** @description An S3 document: its sidecar was written; its event re-labels the document. */
            202: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["DocumentUpdate"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            405: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            429: {
                headers: {
                    /** @description Whole seconds until the tenant's or key's limit admits a request again (`rate_limited`, `too_many_runs`); absent on a quota refusal. */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            502: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    reindex_namespace_v1_namespaces__namespace__reindex_post: {
        parameters: {
            query?: never;
            header?: {
                /** @description The end user this request acts for (documents' access lists apply). Only with a key created with `assertUser` (else 403); a key with `requireUser` must send it. */
                "Ragline-User-Id"?: string;
                /** @description The end user's groups, comma-separated (at most 100), with Ragline-User-Id. */
                "Ragline-User-Groups"?: string;
            };
            path: {
                namespace: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["ReindexRequest"];
            };
        };
        responses: {
            /** @description Successful Response */
            202: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["NamespaceView"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            405: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            429: {
                headers: {
                    /** @description Whole seconds until the tenant's or key's limit admits a request again (`rate_limited`, `too_many_runs`); absent on a quota refusal. */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            502: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    search_v1_namespaces__namespace__search_post: {
        parameters: {
            query?: never;
            header?: {
                /** @description The end user this request acts for (documents' access lists apply). Only with a key created with `assertUser` (else 403); a key with `requireUser` must send it. */
                "Ragline-User-Id"?: string;
                /** @description The end user's groups, comma-separated (at most 100), with Ragline-User-Id. */
                "Ragline-User-Groups"?: string;
                /** @description Names the run: a retry with the same key and body replays the recorded result instead of running (and charging) again; another body is a 422. */
                "Idempotency-Key"?: string;
            };
            path: {
                namespace: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["SearchRequest"];
            };
        };
        responses: {
            /** @description Successful Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["SearchResponse"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            405: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            429: {
                headers: {
                    /** @description Whole seconds until the tenant's or key's limit admits a request again (`rate_limited`, `too_many_runs`); absent on a quota refusal. */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            502: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    list_sources_v1_namespaces__namespace__sources_get: {
        parameters: {
            query?: never;
            header?: {
                /** @description The end user this request acts for (documents' access lists apply). Only with a key created with `assertUser` (else 403); a key with `requireUser` must send it. */
                "Ragline-User-Id"?: string;
                /** @description The end user's groups, comma-separated (at most 100), with Ragline-User-Id. */
                "Ragline-User-Groups"?: string;
            };
            path: {
                namespace: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Successful Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["SourceList"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            405: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            429: {
                headers: {
                    /** @description Whole seconds until the tenant's or key's limit admits a request again (`rate_limited`, `too_many_runs`); absent on a quota refusal. */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            502: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    create_source_v1_namespaces__namespace__sources_post: {
        parameters: {
            query?: never;
            header?: {
                /** @description The end user this request acts for (documents' access lists apply). Only with a key created with `assertUser` (else 403); a key with `requireUser` must send it. */
                "Ragline-User-Id"?: string;
                /** @description The end user's groups, comma-separated (at most 100), with Ragline-User-Id. */
                "Ragline-User-Groups"?: string;
            };
            path: {
                namespace: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["NewSource"];
            };
        };
        responses: {
            /** @description Successful Response */
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["SourceView"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            405: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            429: {
                headers: {
                    /** @description Whole seconds until the tenant's or key's limit admits a request again (`rate_limited`, `too_many_runs`); absent on a quota refusal. */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            502: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    get_source_v1_namespaces__namespace__sources__source_id__get: {
        parameters: {
            query?: never;
            header?: {
                /** @description The end user this request acts for (documents' access lists apply). Only with a key created with `assertUser` (else 403); a key with `requireUser` must send it. */
                "Ragline-User-Id"?: string;
                /** @description The end user's groups, comma-separated (at most 100), with Ragline-User-Id. */
                "Ragline-User-Groups"?: string;
            };
            path: {
                namespace: string;
                source_id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Successful Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["SourceView"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            405: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            429: {
                headers: {
                    /** @description Whole seconds until the tenant's or key's limit admits a request again (`rate_limited`, `too_many_runs`); absent on a quota refusal. */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            502: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    delete_source_v1_namespaces__namespace__sources__source_id__delete: {
        parameters: {
            query?: never;
            header?: {
                /** @description The end user this request acts for (documents' access lists apply). Only with a key created with `assertUser` (else 403); a key with `requireUser` must send it. */
                "Ragline-User-Id"?: string;
                /** @description The end user's groups, comma-separated (at most 100), with Ragline-User-Id. */
                "Ragline-User-Groups"?: string;
            };
            path: {
                namespace: string;
                source_id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Successful Response */
            202: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["SourceView"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            405: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            429: {
                headers: {
                    /** @description Whole seconds until the tenant's or key's limit admits a request again (`rate_limited`, `too_many_runs`); absent on a quota refusal. */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            502: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    update_source_v1_namespaces__namespace__sources__source_id__patch: {
        parameters: {
            query?: never;
            header?: {
                /** @description The end user this request acts for (documents' access lists apply). Only with a key created with `assertUser` (else 403); a key with `requireUser` must send it. */
                "Ragline-User-Id"?: string;
                /** @description The end user's groups, comma-separated (at most 100), with Ragline-User-Id. */
                "Ragline-User-Groups"?: string;
            };
            path: {
                namespace: string;
                source_id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["SourcePatch"];
            };
        };
        responses: {
            /** @description Successful Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["SourceView"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            405: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            429: {
                headers: {
                    /** @description Whole seconds until the tenant's or key's limit admits a request again (`rate_limited`, `too_many_runs`); absent on a quota refusal. */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            502: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    sync_source_v1_namespaces__namespace__sources__source_id__sync_post: {
        parameters: {
            query?: never;
            header?: {
                /** @description The end user this request acts for (documents' access lists apply). Only with a key created with `assertUser` (else 403); a key with `requireUser` must send it. */
                "Ragline-User-Id"?: string;
                /** @description The end user's groups, comma-separated (at most 100), with Ragline-User-Id. */
                "Ragline-User-Groups"?: string;
            };
            path: {
                namespace: string;
                source_id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["SyncRequest"];
            };
        };
        responses: {
            /** @description Successful Response */
            202: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["SourceView"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            405: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            429: {
                headers: {
                    /** @description Whole seconds until the tenant's or key's limit admits a request again (`rate_limited`, `too_many_runs`); absent on a quota refusal. */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            502: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    getRun: {
        parameters: {
            query?: never;
            header?: {
                /** @description The end user this request acts for (documents' access lists apply). Only with a key created with `assertUser` (else 403); a key with `requireUser` must send it. */
                "Ragline-User-Id"?: string;
                /** @description The end user's groups, comma-separated (at most 100), with Ragline-User-Id. */
                "Ragline-User-Groups"?: string;
            };
            path: {
                run_id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The run. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["RunView"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            405: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            429: {
                headers: {
                    /** @description Whole seconds until the tenant's or key's limit admits a request again (`rate_limited`, `too_many_runs`); absent on a quota refusal. */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            502: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    cancelRun: {
        parameters: {
            query?: never;
            header?: {
                /** @description The end user this request acts for (documents' access lists apply). Only with a key created with `assertUser` (else 403); a key with `requireUser` must send it. */
                "Ragline-User-Id"?: string;
                /** @description The end user's groups, comma-separated (at most 100), with Ragline-User-Id. */
                "Ragline-User-Groups"?: string;
            };
            path: {
                run_id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The run as it stands. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["RunView"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            405: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            429: {
                headers: {
                    /** @description Whole seconds until the tenant's or key's limit admits a request again (`rate_limited`, `too_many_runs`); absent on a quota refusal. */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            502: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    runEvents: {
        parameters: {
            query?: {
                /** @description The same as `Last-Event-ID`, for clients that cannot set the header. */
                after?: number;
            };
            header?: {
                /** @description Resume after this event (the `id` of the last event received); 0 or absent: from the start. */
                "Last-Event-ID"?: number;
                /** @description The end user this request acts for (documents' access lists apply). Only with a key created with `assertUser` (else 403); a key with `requireUser` must send it. */
                "Ragline-User-Id"?: string;
                /** @description The end user's groups, comma-separated (at most 100), with Ragline-User-Id. */
                "Ragline-User-Groups"?: string;
            };
            path: {
                run_id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Server-Sent Events, each with its `id`, exactly those after `Last-Event-ID`. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "text/event-stream": components["schemas"]["ChatEvent"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            405: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            429: {
                headers: {
                    /** @description Whole seconds until the tenant's or key's limit admits a request again (`rate_limited`, `too_many_runs`); absent on a quota refusal. */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            502: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    get_identity_provider_v1_tenant_identity_provider_get: {
        parameters: {
            query?: never;
            header?: {
                /** @description The end user this request acts for (documents' access lists apply). Only with a key created with `assertUser` (else 403); a key with `requireUser` must send it. */
                "Ragline-User-Id"?: string;
                /** @description The end user's groups, comma-separated (at most 100), with Ragline-User-Id. */
                "Ragline-User-Groups"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Successful Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["IdentityProviderView"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            405: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            429: {
                headers: {
                    /** @description Whole seconds until the tenant's or key's limit admits a request again (`rate_limited`, `too_many_runs`); absent on a quota refusal. */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            502: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    put_identity_provider_v1_tenant_identity_provider_put: {
        parameters: {
            query?: never;
            header?: {
                /** @description The end user this request acts for (documents' access lists apply). Only with a key created with `assertUser` (else 403); a key with `requireUser` must send it. */
                "Ragline-User-Id"?: string;
                /** @description The end user's groups, comma-separated (at most 100), with Ragline-User-Id. */
                "Ragline-User-Groups"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["IdentityProviderBody"];
            };
        };
        responses: {
            /** @description Successful Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["IdentityProviderView"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            405: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            429: {
                headers: {
                    /** @description Whole seconds until the tenant's or key's limit admits a request again (`rate_limited`, `too_many_runs`); absent on a quota refusal. */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            502: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    delete_identity_provider_v1_tenant_identity_provider_delete: {
        parameters: {
            query?: never;
            header?: {
                /** @description The end user this request acts for (documents' access lists apply). Only with a key created with `assertUser` (else 403); a key with `requireUser` must send it. */
                "Ragline-User-Id"?: string;
                /** @description The end user's groups, comma-separated (at most 100), with Ragline-User-Id. */
                "Ragline-User-Groups"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Successful Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["IdentityProviderDeleted"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            405: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            429: {
                headers: {
                    /** @description Whole seconds until the tenant's or key's limit admits a request again (`rate_limited`, `too_many_runs`); absent on a quota refusal. */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            502: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    usage_v1_usage_get: {
        parameters: {
            query?: {
                period?: string | null;
            };
            header?: {
                /** @description The end user this request acts for (documents' access lists apply). Only with a key created with `assertUser` (else 403); a key with `requireUser` must send it. */
                "Ragline-User-Id"?: string;
                /** @description The end user's groups, comma-separated (at most 100), with Ragline-User-Id. */
                "Ragline-User-Groups"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Successful Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["UsageReport"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            405: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            429: {
                headers: {
                    /** @description Whole seconds until the tenant's or key's limit admits a request again (`rate_limited`, `too_many_runs`); absent on a quota refusal. */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            502: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    list_webhooks_v1_webhooks_get: {
        parameters: {
            query?: never;
            header?: {
                /** @description The end user this request acts for (documents' access lists apply). Only with a key created with `assertUser` (else 403); a key with `requireUser` must send it. */
                "Ragline-User-Id"?: string;
                /** @description The end user's groups, comma-separated (at most 100), with Ragline-User-Id. */
                "Ragline-User-Groups"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Successful Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["WebhookList"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            405: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            429: {
                headers: {
                    /** @description Whole seconds until the tenant's or key's limit admits a request again (`rate_limited`, `too_many_runs`); absent on a quota refusal. */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            502: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    create_webhook_v1_webhooks_post: {
        parameters: {
            query?: never;
            header?: {
                /** @description The end user this request acts for (documents' access lists apply). Only with a key created with `assertUser` (else 403); a key with `requireUser` must send it. */
                "Ragline-User-Id"?: string;
                /** @description The end user's groups, comma-separated (at most 100), with Ragline-User-Id. */
                "Ragline-User-Groups"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["NewWebhook"];
            };
        };
        responses: {
            /** @description Successful Response */
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["NewWebhookView"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            405: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            429: {
                headers: {
                    /** @description Whole seconds until the tenant's or key's limit admits a request again (`rate_limited`, `too_many_runs`); absent on a quota refusal. */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            502: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    get_webhook_v1_webhooks__webhook_id__get: {
        parameters: {
            query?: never;
            header?: {
                /** @description The end user this request acts for (documents' access lists apply). Only with a key created with `assertUser` (else 403); a key with `requireUser` must send it. */
                "Ragline-User-Id"?: string;
                /** @description The end user's groups, comma-separated (at most 100), with Ragline-User-Id. */
                "Ragline-User-Groups"?: string;
            };
            path: {
                webhook_id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Successful Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["WebhookView"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            405: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            429: {
                headers: {
                    /** @description Whole seconds until the tenant's or key's limit admits a request again (`rate_limited`, `too_many_runs`); absent on a quota refusal. */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            502: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    delete_webhook_v1_webhooks__webhook_id__delete: {
        parameters: {
            query?: never;
            header?: {
                /** @description The end user this request acts for (documents' access lists apply). Only with a key created with `assertUser` (else 403); a key with `requireUser` must send it. */
                "Ragline-User-Id"?: string;
                /** @description The end user's groups, comma-separated (at most 100), with Ragline-User-Id. */
                "Ragline-User-Groups"?: string;
            };
            path: {
                webhook_id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Successful Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["WebhookView"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            405: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            429: {
                headers: {
                    /** @description Whole seconds until the tenant's or key's limit admits a request again (`rate_limited`, `too_many_runs`); absent on a quota refusal. */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            502: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    rotate_webhook_secret_v1_webhooks__webhook_id__rotate_secret_post: {
        parameters: {
            query?: never;
            header?: {
                /** @description The end user this request acts for (documents' access lists apply). Only with a key created with `assertUser` (else 403); a key with `requireUser` must send it. */
                "Ragline-User-Id"?: string;
                /** @description The end user's groups, comma-separated (at most 100), with Ragline-User-Id. */
                "Ragline-User-Groups"?: string;
            };
            path: {
                webhook_id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Successful Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["NewWebhookView"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            405: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            429: {
                headers: {
                    /** @description Whole seconds until the tenant's or key's limit admits a request again (`rate_limited`, `too_many_runs`); absent on a quota refusal. */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            502: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description An error, in the one shape (`error.code` says which). */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
}
