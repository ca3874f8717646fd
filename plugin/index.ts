/**
 * The code plugin: the access control of the authorizer inside a Node.js application (Express, Connect,
 * Fastify, Hono, Lambda Function URLs, or anything through `decide`), on the same budget. docs/plugin.md.
 */

export { ConfigError } from '../core/settings/config';
export { type AccessControl, createAccessControl } from './access-control';
export {
  type AccessAnswer,
  PROBLEM_JSON,
  type Refusal,
  type RefusalHandler,
  type RefusalReason,
  type RequestProblem,
} from './answers';
export type { ExpressMiddleware, ExpressRequest } from './frameworks/express';
export type { FastifyAccessPlugin } from './frameworks/fastify';
export type { FunctionUrlEvent, FunctionUrlHandler, FunctionUrlResult } from './frameworks/function-url';
export type { AccessVariables, HonoMiddleware } from './frameworks/hono';
export type { AccessGrant, AccessOutcome, CallEnd } from './outcome';
export type { RedisInput } from './redis';
export type { ReportingModeName } from './reporting';
export type { AccessRequest, RawRequest } from './request';
export { type AccessControlSettings, PLUGIN_ENV, settingsFromEnv } from './settings';
