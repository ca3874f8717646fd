/**
 * The Fastify (5) plugin: an onRequest hook, in the context the plugin is registered in and its
 * children only (encapsulation: registered at the root it guards every route, registered inside a
 * plugin it guards that plugin's routes). It marks itself `skip-override`, as fastify-plugin does, so
 * its hook and its `request.access` decorator belong to the context that registers it. The call is
 * settled on onResponse when its end matters (a thrown handler answers 500 first), and the plugin
 * closes on onClose.
 * It imports nothing from Fastify: the types below are the little of it the plugin uses.
 */
import type { AccessControl } from '../access-control';
import type { AccessGrant, CallEnd } from '../outcome';

interface FastifyRequestLike {
  readonly method: string;
  readonly url: string;
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  readonly ip?: string;
  access?: AccessGrant | null;
}

interface FastifyReplyLike {
  readonly statusCode: number;
  code(status: number): FastifyReplyLike;
  header(name: string, value: string): FastifyReplyLike;
  send(body: string): FastifyReplyLike;
}

type Hook = (request: FastifyRequestLike, reply: FastifyReplyLike) => Promise<unknown>;

export interface FastifyInstanceLike {
  addHook(name: 'onRequest' | 'onResponse', hook: Hook): unknown;
  addHook(name: 'onClose', hook: () => Promise<void>): unknown;
  hasRequestDecorator(name: string): boolean;
  decorateRequest(name: string, value: null): unknown;
}

export type FastifyAccessPlugin = ((instance: FastifyInstanceLike, options: unknown) => Promise<void>) & {
  readonly [key: symbol]: unknown;
};

export function fastifyPlugin(controlOf: () => Pick<AccessControl, 'check' | 'close'>): FastifyAccessPlugin {
  // The settles of the calls whose end matters, until their response is sent.
  const settles = new WeakMap<object, (end: CallEnd) => Promise<void>>();
  const plugin = async (instance: FastifyInstanceLike) => {
    const control = controlOf();
    if (!instance.hasRequestDecorator('access')) instance.decorateRequest('access', null);
    instance.addHook('onRequest', async (request, reply) => {
      const outcome = await control.check({
        method: request.method,
        url: request.url,
        headers: request.headers,
        ...(request.ip !== undefined && { clientAddress: request.ip }),
      });
      if (!outcome.allowed) {
        reply.code(outcome.answer.status);
        for (const [name, value] of Object.entries(outcome.answer.headers)) reply.header(name, value);
        return reply.send(outcome.answer.body);
      }
      for (const [name, value] of Object.entries(outcome.headers)) reply.header(name, value);
      request.access = outcome.grant;
      if (outcome.settle !== undefined) settles.set(request, outcome.settle);
      return undefined;
    });
    instance.addHook('onResponse', async (request, reply) => {
      const settle = settles.get(request);
      if (settle === undefined) return;
      settles.delete(request);
      await settle(reply.statusCode);
    });
    instance.addHook('onClose', () => control.close());
  };
  return Object.assign(plugin, {
    [Symbol.for('skip-override')]: true,
    [Symbol.for('fastify.display-name')]: 'apigw-access-management',
  });
}
