/**
 * One call to the provider's SOAP backend: the original body, content type and SOAPAction, under one
 * deadline for the whole exchange (connection, request and answer), redirects not followed. The
 * answer comes back as it came. A backend that cannot be reached, breaks off, or answers more than a
 * Lambda can return is `unavailable`; one that does not answer in time is `timeout`.
 */

/** SOAP 1.1's action header (section 6.1.1); SOAP 1.2 carries the action in the content type. */
export const SOAP_ACTION_HEADER = 'soapaction';

/** A Lambda's answer is at most 6 MB, and a binary answer grows by a third as base64. */
export const MAX_BACKEND_ANSWER_BYTES = 4 * 1024 * 1024;

export interface BackendCall {
  readonly url: string;
  readonly body: Buffer;
  readonly contentType: string;
  readonly soapAction?: string;
  readonly timeoutMs: number;
}

export type BackendFailure = 'unavailable' | 'timeout';

export type BackendResult =
  | {
      readonly ok: true;
      readonly status: number;
      readonly contentType?: string;
      readonly body: Buffer;
    }
  | { readonly ok: false; readonly failure: BackendFailure; readonly detail: string };

export type ForwardPort = (call: BackendCall) => Promise<BackendResult>;

/** The whole answer body, or undefined once it passes `maxBytes` (the rest is not read). */
async function answerBody(response: Response, maxBytes: number): Promise<Buffer | undefined> {
  if (response.body === null) return Buffer.alloc(0);
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of response.body) {
    size += chunk.byteLength;
    if (size > maxBytes) return undefined;
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

/** What failed, for logs and the Fault: a system error code, never the request. */
function failureDetail(error: unknown): string {
  const cause = (error as { cause?: { code?: unknown } } | undefined)?.cause;
  if (typeof cause?.code === 'string')
    return cause.code === 'ECONNREFUSED' ? 'connection refused' : cause.code;
  return error instanceof Error ? error.message : String(error);
}

export async function forwardToBackend(call: BackendCall): Promise<BackendResult> {
  const signal = AbortSignal.timeout(call.timeoutMs);
  try {
    const response = await fetch(call.url, {
      method: 'POST',
      headers: {
        'content-type': call.contentType,
        ...(call.soapAction !== undefined && { [SOAP_ACTION_HEADER]: call.soapAction }),
      },
      body: call.body,
      redirect: 'manual',
      signal,
    });
    const body = await answerBody(response, MAX_BACKEND_ANSWER_BYTES);
    if (body === undefined) {
      return {
        ok: false,
        failure: 'unavailable',
        detail: `answer larger than ${MAX_BACKEND_ANSWER_BYTES} bytes`,
      };
    }
    const contentType = response.headers.get('content-type');
    return { ok: true, status: response.status, ...(contentType !== null && { contentType }), body };
  } catch (error) {
    if (signal.aborted)
      return { ok: false, failure: 'timeout', detail: `no answer within ${call.timeoutMs} ms` };
    return { ok: false, failure: 'unavailable', detail: failureDetail(error) };
  }
}
