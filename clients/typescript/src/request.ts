/**
 * Types of `RaglineClient.request`: any operation of the OpenAPI document by its method and path
 * template, its path parameters, query and JSON body typed from the generated `paths` — so a route added
 * to the API is callable, typed, as soon as the types are regenerated (`make ts-client`).
 */
import type { paths } from "./generated/openapi.js";

export type Method = "get" | "post" | "put" | "patch" | "delete";

/** The path templates that have an operation for `M`. */
export type PathOf<M extends Method> = {
  [P in keyof paths]: paths[P][M] extends { responses: unknown } ? P : never;
}[keyof paths];

type Operation<M extends Method, P extends PathOf<M>> = paths[P][M];
type Parameters<O, Where extends string> = O extends { parameters: infer PS }
  ? PS extends { [W in Where]?: infer X }
    ? X
    : never
  : never;
/** A JSON body's fields are all optional here: the generator reads a field with a default as present,
 * which a request may leave out; the server names a missing field in a 400. */
type JsonBody<O> = O extends { requestBody?: infer RB }
  ? [NonNullable<RB>] extends [never]
    ? never
    : NonNullable<RB> extends { content: { "application/json": infer B } }
    ? B extends object
      ? Partial<B>
      : B
    : never
  : never;
type Success = 200 | 201 | 202 | 204;

/** The JSON body of `M P`'s successful responses. */
export type ResponseOf<M extends Method, P extends PathOf<M>> =
  Operation<M, P> extends { responses: infer R }
    ? { [S in keyof R & Success]: R[S] extends { content: { "application/json": infer B } } ? B : never }[keyof R & Success]
    : never;

type Present<K extends string, T> = [T] extends [never] ? { [_ in K]?: never } : undefined extends T ? { [_ in K]?: T } : { [_ in K]: T };

/** What `request(M, P, …)` takes: `params` (the path's), `query`, `body`, as the operation declares them;
 * `idempotencyKey` makes a POST safe to retry (the metered runs accept one). */
export type RequestInit<M extends Method, P extends PathOf<M>> = Present<"params", Parameters<Operation<M, P>, "path">> &
  Present<"query", Parameters<Operation<M, P>, "query">> &
  Present<"body", JsonBody<Operation<M, P>>> & { idempotencyKey?: string; signal?: AbortSignal };

/** `template` with each `{name}` replaced by its escaped value. */
export function fillPath(template: string, params: Record<string, string> | undefined, escape: (v: string) => string): string {
  return template.replace(/\{([^}]+)\}/g, (_whole, name: string) => {
    const value = params?.[name];
    if (value === undefined) throw new TypeError(`no value for {${name}} in ${template}`);
    return escape(value);
  });
}
