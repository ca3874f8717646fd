/**
 * The platform's account webhooks (`<event><type>account</type>`), heard at `POST /portal/hooks/account`:
 * an account approved or rejected on the platform (`approve.xml`, `reject.xml`, or the admin UI) is told
 * to its developer by e-mail, once per state. The page itself reads the account's state from the
 * platform at each visit, so without webhooks the approval still shows at the next sign-in; the e-mail
 * is what the webhook adds. The platform sends them for changes made with a provider token only when
 * "Actions in the admin portal also trigger webhooks" is on.
 */
import { eventXmlOf } from '../platform/webhooks';
import { AdminAnswerError, accountEventOf } from './admin-xml';
import { json, type PortalContext } from './context';
import { originOf, type PortalRequest, type PortalResponse } from './http';
import { MESSAGES } from './mail';
import { sameSecret } from './secrets';

const MAX_BODY_BYTES = 256 * 1024;
const NOTIFIED_TTL_SECONDS = 30 * 24 * 3600;

export async function accountWebhook(ctx: PortalContext, request: PortalRequest): Promise<PortalResponse> {
  const token = request.query.token;
  if (token === undefined || !sameSecret(token, ctx.deps.webhookToken))
    return json(401, { message: 'Unauthorized' });
  if (Buffer.byteLength(request.body) > MAX_BODY_BYTES)
    return json(413, { message: 'the body is too large' });
  let event: ReturnType<typeof accountEventOf>;
  try {
    event = accountEventOf(eventXmlOf(request.body, request.headers['content-type']));
  } catch (error) {
    if (!(error instanceof AdminAnswerError) && (error as Error).name !== 'WebhookBodyError') throw error;
    return json(400, { message: `not a webhook event: ${(error as Error).message}` });
  }
  const { account } = event;
  // A state change is an `updated` event; an account created approved (no approval asked) is not told.
  if (
    account === undefined ||
    event.action !== 'updated' ||
    (account.state !== 'approved' && account.state !== 'rejected')
  ) {
    return json(200, { message: 'ignored' });
  }
  if (account.email === undefined) return json(200, { message: 'ignored: the account names no e-mail' });
  const first = await ctx.deps.redis.set(
    `${ctx.prefix}notified:${account.id}:${account.state}`,
    '1',
    'EX',
    NOTIFIED_TTL_SECONDS,
    'NX',
  );
  if (first === null) return json(200, { message: 'already told' });
  const message =
    account.state === 'approved'
      ? MESSAGES.approved(account.email, `${originOf(request)}${request.base}`)
      : MESSAGES.rejected(account.email);
  await ctx.deps.mail.send(message);
  ctx.deps.logger.info('portal: account state told', { account: account.id, state: account.state });
  return json(200, { message: `told ${account.state}` });
}
