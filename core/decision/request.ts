/**
 * A call to decide, as every gateway format carries it once its adapter has read the event
 * (adapters/gateway): the core never sees a gateway's event.
 */

/** Values by name, every value of each: query parameters, or header values under their spelling. */
export type ParameterValues = Readonly<Record<string, readonly string[]>>;

export interface GatewayRequest {
  readonly method: string;
  /**
   * The path the API sees, as the client sent it (still percent-encoded; mapping rules match its
   * normalized form), without the query string, the stage or a custom domain's base path.
   */
  readonly path: string;
  /** Query parameters, decoded, in the order sent. */
  readonly query: ParameterValues;
  /** Header values under each spelling the gateway handed over (names are matched case-insensitively). */
  readonly headers: ParameterValues;
  /**
   * The client's IP address as the gateway saw it (REST `identity.sourceIp`, HTTP API `http.sourceIp`);
   * undefined when the event does not carry one. The first-call gate shares its bound by it.
   */
  readonly sourceAddress?: string;
}

/** The parameters of an empty query string: one object, never written (ParameterValues is read-only). */
const NO_PARAMETERS: ParameterValues = Object.freeze({});

/** Longest raw query string read; API Gateway's own limits keep real ones far below it. */
export const MAX_QUERY_STRING_BYTES = 64 * 1024;

/**
 * The parameters of a raw query string (`a=1&a=2&b`), each value decoded as a form value: the only
 * place a format that joins repeated values with commas (HTTP API payload 2.0) keeps them apart.
 * Bounded and linear: a string beyond MAX_QUERY_STRING_BYTES is refused, not read in part.
 */
export function parsedQueryString(raw: string): ParameterValues {
  if (raw === '') return NO_PARAMETERS;
  if (raw.length > MAX_QUERY_STRING_BYTES) {
    throw new RangeError(`query string longer than ${MAX_QUERY_STRING_BYTES} characters`);
  }
  // A Map, then own properties: a parameter named __proto__ stays a parameter.
  const query = new Map<string, string[]>();
  for (const [name, value] of new URLSearchParams(raw)) {
    const values = query.get(name);
    if (values === undefined) query.set(name, [value]);
    else values.push(value);
  }
  return Object.fromEntries(query);
}
