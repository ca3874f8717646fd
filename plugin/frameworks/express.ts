/**
 * Express (5) and Connect middleware. It reads Node's own request and response, so it imports
 * nothing from Express: a refusal is written and ended here, an allowed call gets its RateLimit headers
 * and its grant (`req.access`) and goes on, and, when its end matters (`countFailedResponses: false`), the
 * call is settled when the response finishes (an error a handler throws reaches Express's error handler,
 * which answers 500 and finishes it).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AccessControl } from '../access-control';
import type { AccessGrant } from '../outcome';
import type { RawRequest } from '../request';
import { sendAnswer } from './node-response';

/** What the middleware reads of a request: Node's, with Express's originalUrl and ip when present. */
export type ExpressRequest = IncomingMessage & {
  /** Express: the URL before any router mount stripped its prefix. */
  originalUrl?: string;
  ip?: string;
  /** The grant of an allowed call, for the handler. */
  access?: AccessGrant;
};

declare global {
  // Express's own Request type (@types/express) merges this, so handlers read `req.access` typed.
  namespace Express {
    interface Request {
      /** The grant of a call the access control allowed. */
      access?: AccessGrant;
    }
  }
}

export type ExpressMiddleware = (
  req: ExpressRequest,
  res: ServerResponse,
  next: (error?: unknown) => void,
) => Promise<void>;

/** An allowed call whose end does not matter (no `settle`) gets no listener on its response's finish. */
export function expressMiddleware(control: Pick<AccessControl, 'check'>): ExpressMiddleware {
  return async (req, res, next) => {
    const clientAddress = req.ip ?? req.socket?.remoteAddress;
    // Built without a spread of a conditional object: one per call, on the hot path.
    const raw: { -readonly [K in keyof RawRequest]: RawRequest[K] } = {
      method: req.method ?? 'GET',
      url: req.originalUrl ?? req.url ?? '/',
      headers: req.headers,
    };
    if (clientAddress !== undefined) raw.clientAddress = clientAddress;
    const outcome = await control.check(raw);
    if (!outcome.allowed) {
      sendAnswer(res, outcome.answer);
      return;
    }
    for (const name in outcome.headers) res.setHeader(name, outcome.headers[name] as string);
    req.access = outcome.grant;
    const { settle } = outcome;
    if (settle !== undefined) res.once('finish', () => void settle(res.statusCode));
    next();
  };
}
