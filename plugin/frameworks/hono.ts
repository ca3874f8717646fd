/**
 * Hono (4) middleware, on the Fetch request Hono hands over: a refusal is answered here, an allowed
 * call gets its grant (`c.get('access')`) and, once the handler has answered, its RateLimit headers;
 * when its end matters, the call is settled with the handler's status (Hono turns a thrown handler into
 * its 500 first).
 * It imports nothing from Hono: the types below are the little of it the middleware uses.
 */
import type { AccessControl } from '../access-control';
import type { AccessGrant } from '../outcome';

interface HonoContextLike {
  readonly req: {
    readonly method: string;
    readonly url: string;
    readonly raw: { readonly headers: Headers };
  };
  readonly res: Response;
  readonly error?: unknown;
  set(key: 'access', value: AccessGrant): void;
}

export type HonoMiddleware = (c: HonoContextLike, next: () => Promise<void>) => Promise<Response | undefined>;

/** The variables the middleware sets, for `new Hono<{ Variables: AccessVariables }>()`. */
export interface AccessVariables {
  access: AccessGrant;
}

export function honoMiddleware(control: Pick<AccessControl, 'check'>): HonoMiddleware {
  return async (c, next) => {
    const outcome = await control.check({ method: c.req.method, url: c.req.url, headers: c.req.raw.headers });
    if (!outcome.allowed) {
      const { status, headers, body } = outcome.answer;
      return new Response(body, { status, headers });
    }
    c.set('access', outcome.grant);
    const { settle } = outcome;
    try {
      await next();
    } catch (error) {
      if (settle !== undefined) await settle('threw');
      throw error;
    }
    for (const [name, value] of Object.entries(outcome.headers)) c.res.headers.set(name, value);
    if (settle !== undefined) await settle(c.error === undefined ? c.res.status : 'threw');
    return undefined;
  };
}
