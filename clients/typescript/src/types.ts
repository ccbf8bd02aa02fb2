/**
 * Named aliases of the generated OpenAPI types (`./generated/openapi.ts`, from docs/openapi.json by
 * `npm run generate`): what the client's methods take and return. Every body is camelCase, as on the wire.
 */
import type { components } from "./generated/openapi.js";

type Schemas = components["schemas"];

export type ErrorBody = Schemas["ErrorBody"];
export type ErrorDetail = Schemas["ErrorDetail"];

export type SearchRequest = Schemas["SearchRequest"];
export type SearchResponse = Schemas["SearchResponse"];
export type HostingSearchRequest = Schemas["HostingSearchRequest"];
export type HostingSearchResponse = Schemas["HostingSearchResponse"];
export type ChatRequest = Schemas["ChatRequest"];
export type ChatResponse = Schemas["ChatResponse"];
export type RequestMessage = Schemas["RequestMessage"];
export type ChunkView = Schemas["ChunkView"];
export type Usage = Schemas["Usage"];
export type Filter = NonNullable<SearchRequest["filter"]>;

/** How a run searched (a chat run's `final` event and body, a hosting search's response): see the README's "Query plans". */
export type QueryPlan = Schemas["QueryPlan"];
export type PlannedRetrieval = Schemas["PlannedRetrieval"];
export type PlanRound = Schemas["PlanRound"];
export type PlanHop = Schemas["PlanHop"];

/** One chat Server-Sent Event's data: a union discriminated by `type`. */
export type RunEvent = Schemas["RunEvent"];
/** The event of one `type`, e.g. `RunEventOf<"final">`. */
export type RunEventOf<T extends RunEvent["type"]> = Extract<RunEvent, { type: T }>;

/** A run as it stands (`getRun`, `cancelRun`): its final event once it ended. */
export type RunView = Schemas["RunView"];
/** `startRun`'s answer: the run queued, where its events are. */
export type RunAccepted = Schemas["RunAccepted"];
export type ConversationView = Schemas["ConversationView"];
export type ConversationList = Schemas["ConversationList"];
export type ConversationSummary = Schemas["ConversationSummary"];
export type TurnView = Schemas["TurnView"];
/** One question of an evaluation: `id` and `question`; the rest may be left out (their defaults). */
export type EvaluationQuestion = Partial<Schemas["EvalQuestion"]> & Pick<Schemas["EvalQuestion"], "id" | "question">;
/** One configuration of an evaluation (every field has a default). */
export type EvaluationConfig = Partial<Schemas["EvalConfig"]>;
/** An answer evaluation job (`createEvaluation`): questions, one or two configurations, the judge. */
export type EvaluationRequest = Omit<Partial<Schemas["EvaluationRequest"]>, "questions" | "configs"> & {
  questions: EvaluationQuestion[];
  configs?: EvaluationConfig[];
};
export type EvaluationView = Schemas["EvaluationView"];
export type EvaluationList = Schemas["EvaluationList"];
export type EvaluationReport = Schemas["EvaluationReport"];

export type AddText = Schemas["AddText"];
export type DocumentLabels = Schemas["DocumentLabels"];
export type DocumentView = Schemas["DocumentView"];
export type DocumentList = Schemas["DocumentList"];
export type DocumentUpdate = Schemas["DocumentUpdate"];
export type DocumentDeletion = Schemas["DocumentDeletion"];

export type NewNamespace = Schemas["NewNamespace"];
export type NamespacePatch = Schemas["NamespacePatch"];
export type ReindexRequest = Schemas["ReindexRequest"];
export type NamespaceView = Schemas["NamespaceView"];
export type NamespaceList = Schemas["NamespaceList"];
export type NamespaceDeleted = Schemas["NamespaceDeleted"];

export type NewKey = Schemas["NewKey"];
export type NewKeyView = Schemas["NewKeyView"];
export type KeyView = Schemas["KeyView"];
export type KeyList = Schemas["KeyList"];
export type UsageReport = Schemas["UsageReport"];

export type IdentityProviderBody = Schemas["IdentityProviderBody"];
export type IdentityProviderView = Schemas["IdentityProviderView"];
export type IdentityProviderDeleted = Schemas["IdentityProviderDeleted"];

export type NewSource = Schemas["NewSource"];
export type SourcePatch = Schemas["SourcePatch"];
export type WebSettings = Schemas["WebSettings"];
export type ConfluenceSettings = Schemas["ConfluenceSettings"];
export type GraphSettings = Schemas["GraphSettings"];
/** A kind's settings as a request gives them: the named fields, and any of the rest (the server's defaults). */
type Given<Body, Required extends keyof Body> = Pick<Body, Required> & Partial<Omit<Body, Required>>;
export type SourceSettings = {
  web?: Given<WebSettings, "seeds">;
  confluence?: Given<ConfluenceSettings, "siteUrl">;
  graph?: Given<GraphSettings, "tenant" | "driveId">;
};
/** `createSource`'s body: the kind, that kind's settings, and the optional rest. */
export type NewSourceBody = Pick<NewSource, "kind"> &
  Partial<Omit<NewSource, "kind" | keyof SourceSettings>> &
  SourceSettings;
/** `updateSource`'s body: what changes (a kind's settings are replaced whole). */
export type SourcePatchBody = Partial<Omit<SourcePatch, keyof SourceSettings>> & SourceSettings;
export type SyncRequest = Schemas["SyncRequest"];
export type SourceView = Schemas["SourceView"];
export type SourceList = Schemas["SourceList"];

export type NewWebhook = Schemas["NewWebhook"];
export type NewWebhookView = Schemas["NewWebhookView"];
export type WebhookView = Schemas["WebhookView"];
export type WebhookList = Schemas["WebhookList"];

/**
 * A request body's optional part as a method's options. The generator reads a field with a default as
 * always present (true of responses); in a request it may be left out, and the server fills it in.
 */
export type Options<Body, Given extends keyof Body = never> = Partial<Omit<Body, Given>>;
