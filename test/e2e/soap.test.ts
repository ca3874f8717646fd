/**
 * The SOAP route end to end through the local stack over HTTP (a real redis-server, the local platform,
 * the demo SOAP echo): allowed calls reach the echo and are counted on their operation's metric at the
 * platform, exactly; refusals are SOAP Faults; limits hold under concurrency; a backend that is down is a
 * 502 Fault and its allowed call stays counted, as a REST call whose integration fails.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { Period } from '../../core/platform/types';
import { bannerLines } from '../../local/banner';
import { freePort } from '../../local/redis';
import { type LocalStack, startLocalStack } from '../../local/stack';
import { parseStackFile } from '../../local/stack-file';
import { clockFromStartOfHour } from './fixtures';

const SERVICE = 'svc-soap';
const NAMESPACE = 'urn:example:access';
const LIMIT = 7;
const SOAP11 = 'http://schemas.xmlsoap.org/soap/envelope/';
const SOAP12 = 'http://www.w3.org/2003/05/soap-envelope';

const PLATFORM = {
  services: [
    {
      id: SERVICE,
      providerKey: 'pk-soap-e2e',
      authentication: 'user_key',
      metrics: [{ name: 'hits', children: [{ name: 'get_quote' }, { name: 'place_order' }] }],
      plans: [
        {
          name: 'Small',
          limits: [
            { metric: 'hits', period: 'hour', value: LIMIT },
            { metric: 'place_order', period: 'eternity', value: 0 },
          ],
        },
      ],
      applications: [
        { id: 'app-soap', userKey: 'soap-key-1', plan: 'Small' },
        { id: 'app-burst', userKey: 'soap-key-burst', plan: 'Small' },
      ],
    },
  ],
};

const GATEWAY = {
  serviceId: SERVICE,
  routes: ['GET /v1/words/{word}'],
  mappingRules: [
    { method: 'POST', pattern: '/GetQuote$', metric: 'get_quote', delta: 1 },
    { method: 'POST', pattern: '/PlaceOrder$', metric: 'place_order', delta: 1 },
  ],
  soapPath: '/soap',
  soapNamespace: NAMESPACE,
};

const stacks: LocalStack[] = [];
afterEach(async () => {
  await Promise.all(stacks.splice(0).map((stack) => stack.stop()));
});

async function start(gateway: Record<string, unknown> = {}): Promise<LocalStack> {
  const stack = await startLocalStack({
    stack: { platform: PLATFORM, gateway: { ...GATEWAY, ...gateway } },
    redis: 'auto',
    sweepIntervalMs: 0,
    redisCommandTimeoutMs: 3_000,
    now: clockFromStartOfHour(),
  });
  stacks.push(stack);
  return stack;
}

function soapCall(
  stack: LocalStack,
  {
    key = 'soap-key-1',
    method = 'GetQuote',
    version = '1.1' as '1.1' | '1.2',
    body,
    action = `urn:example:${method}`,
  }: Record<string, string> & {
    version?: '1.1' | '1.2';
  } = {},
): Promise<{ status: number; text: string }> {
  const envelope =
    body ??
    `<?xml version="1.0" encoding="UTF-8"?><s:Envelope xmlns:s="${version === '1.1' ? SOAP11 : SOAP12}">` +
      `<s:Header><x:ApiKey xmlns:x="${NAMESPACE}">${key}</x:ApiKey><x:method xmlns:x="${NAMESPACE}">${method}</x:method></s:Header>` +
      `<s:Body><q:${method} xmlns:q="urn:example:quotes"><q:symbol>ACME</q:symbol></q:${method}></s:Body></s:Envelope>`;
  const contentType =
    version === '1.1' ? 'text/xml; charset=utf-8' : `application/soap+xml; charset=utf-8; action="${action}"`;
  return fetch(stack.gateways[0]?.soapUrl ?? '', {
    method: 'POST',
    headers: {
      'content-type': contentType,
      ...(version === '1.1' && { SOAPAction: `"${action}"` }),
    },
    body: envelope,
    signal: AbortSignal.timeout(10_000),
  }).then(async (response) => ({ status: response.status, text: await response.text() }));
}

const usage = (stack: LocalStack, app: string, metric: string, period: Period = 'hour') =>
  stack.platform?.usage(SERVICE, app, metric, period);

describe('the SOAP route of the local stack', () => {
  it('forwards allowed calls to the echo, answers refusals as Faults, and the platform counts exactly the allowed calls', async () => {
    const stack = await start();
    const allowed = await soapCall(stack);
    expect(allowed.status).toBe(200);
    expect(allowed.text).toContain('<op:operation>GetQuote</op:operation>');
    expect(allowed.text).not.toContain('soap-key-1');
    const allowed12 = await soapCall(stack, { version: '1.2' });
    expect(allowed12.status).toBe(200);
    expect(allowed12.text).toContain('<op:soapVersion>1.2</op:soapVersion>');

    const disabled = await soapCall(stack, { method: 'PlaceOrder' });
    expect(disabled.status).toBe(500);
    expect(disabled.text).toContain(
      '<faultcode>soap:Client</faultcode><faultstring>Usage limits exceeded</faultstring>',
    );
    const badKey = await soapCall(stack, { key: 'no-such-key', version: '1.2' });
    expect(badKey.status).toBe(400);
    expect(badKey.text).toContain('t:invalid_credential');
    const unmapped = await soapCall(stack, { method: 'DeleteAll' });
    expect(unmapped.text).toContain('No mapping rule matches the operation: DeleteAll');
    const malformed = await soapCall(stack, {
      body: '<s:Envelope xmlns:s="http://schemas.xmlsoap.org/soap/envelope/"><s:Body>',
    });
    expect(malformed.status).toBe(500);
    expect(malformed.text).toContain('Unreadable envelope');

    const more: number[] = [];
    for (let i = 0; i < LIMIT; i++) more.push((await soapCall(stack)).status);
    // Two calls before, five now: the seventh is the last one the hourly limit lets through.
    expect(more).toEqual([200, 200, 200, 200, 200, 500, 500]);
    const limited = await soapCall(stack, { version: '1.2' });
    expect(limited.text).toContain('t:limits_exceeded');

    const flushed = await stack.flush();
    expect(flushed).toMatchObject({ unreported: 0, queued: 0, deadLetters: 0 });
    expect(usage(stack, 'app-soap', 'get_quote')).toBe(LIMIT);
    expect(usage(stack, 'app-soap', 'hits')).toBe(LIMIT);
    expect(usage(stack, 'app-soap', 'place_order', 'eternity')).toBe(0);
    expect(stack.metrics()).toMatchObject({ SoapForwarded: LIMIT });
  });

  it('refuses an action naming another operation than the counted one, in both versions, and counts nothing', async () => {
    const stack = await start();
    const placeOrder = 'urn:example:PlaceOrder';
    const smuggled11 = await soapCall(stack, { action: placeOrder });
    expect(smuggled11.status).toBe(500);
    expect(smuggled11.text).toContain(
      '<faultcode>soap:Client</faultcode><faultstring>The SOAP action names another operation',
    );
    const smuggled12 = await soapCall(stack, { version: '1.2', action: placeOrder });
    expect(smuggled12.status).toBe(400);
    expect(smuggled12.text).toContain('t:action_mismatch');
    const agreeing12 = await soapCall(stack, { version: '1.2' });
    expect(agreeing12.status).toBe(200);
    expect(agreeing12.text).toContain('<op:action>urn:example:GetQuote</op:action>');
    await stack.flush();
    expect(usage(stack, 'app-soap', 'get_quote')).toBe(1);
    expect(usage(stack, 'app-soap', 'place_order', 'eternity')).toBe(0);
    expect(stack.metrics()).toMatchObject({ SoapForwarded: 1 });
  });

  it("prints a SOAP curl per application in npm start's banner, whose envelope the route allows", async () => {
    const stack = await start();
    const definition = parseStackFile({ platform: PLATFORM, gateway: GATEWAY }, {});
    const lines = bannerLines(definition, stack).filter((line) => line.includes('--data'));
    expect(lines).toHaveLength(2);
    const line = lines[0] ?? '';
    expect(line).toContain(`xmlns:t="${NAMESPACE}"`);
    expect(line).toContain('<t:ApiKey>soap-key-1</t:ApiKey><t:method>GetQuote</t:method>');
    const envelope = /--data '([^']*)'/.exec(line)?.[1] ?? '';
    expect((await soapCall(stack, { body: envelope })).status).toBe(200);
  });

  it('holds the limit exactly under concurrent first calls', async () => {
    const stack = await start();
    const answers = await Promise.all(
      Array.from({ length: 20 }, () => soapCall(stack, { key: 'soap-key-burst' })),
    );
    const statuses = answers.map((answer) => answer.status);
    expect(statuses.filter((status) => status === 200)).toHaveLength(LIMIT);
    expect(statuses.filter((status) => status === 500)).toHaveLength(20 - LIMIT);
    await stack.flush();
    expect(usage(stack, 'app-burst', 'get_quote')).toBe(LIMIT);
  });

  it('answers a 502 Fault when the backend is down, and counts only the first call (the platform counted it)', async () => {
    const stack = await start({ soapBackendUrl: `http://127.0.0.1:${await freePort()}/soap` });
    expect(stack.soapEcho).toBeUndefined();
    const down = await soapCall(stack);
    expect(down.status).toBe(502);
    expect(down.text).toContain('<faultcode>soap:Server</faultcode>');
    const down12 = await soapCall(stack, { version: '1.2' });
    expect(down12.status).toBe(502);
    expect(down12.text).toContain('t:backend_unavailable');
    expect((await soapCall(stack)).status).toBe(502);
    await stack.flush();
    expect(usage(stack, 'app-soap', 'get_quote')).toBe(1);
  });
});
