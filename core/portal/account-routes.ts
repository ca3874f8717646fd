/**
 * Signing up and signing in, after porta's developer portal (`DeveloperPortal::SignupController`,
 * `ActivationsController`): an e-mail proves the address before anything exists at the platform; the
 * link's page confirms with a button (POST), so a scanner that opens links consumes none; then the
 * account is created with `signup.xml`, porta's only sign-up call. Sign-up and sign-in answer the same
 * page whatever the address, so neither tells who has an account.
 */
import type { AdminFailure } from './admin-client';
import type { Plan } from './admin-xml';
import { html, type PortalContext, redirect } from './context';
import { CSRF_FIELD, checkCsrf } from './csrf';
import { escapeHtml, formOf, originOf, type PortalRequest, type PortalResponse } from './http';
import { INVITE_TTL_MS, type LinkFacts } from './links';
import { type MailMessage, MESSAGES } from './mail';
import { layout, plansTable, postForm } from './pages';
import { randomToken, sameSecret, sha256Hex } from './secrets';
import { cookieHeader, type Session } from './sessions';
import { admitSignup, type MailKind, mayMail } from './signup-limits';

const EMAIL = /^[^\s@<>"]{1,64}@[A-Za-z0-9.-]{1,253}\.[A-Za-z]{2,63}$/;
const MAX_ORG = 100;
const MAX_TOKEN = 100;

export function normalEmail(text: string | undefined): string | undefined {
  const email = text?.trim().toLowerCase();
  return email !== undefined && EMAIL.test(email) ? email : undefined;
}

/** The answer of a refused POST: why, and nothing else. */
export function refused(
  ctx: PortalContext,
  request: PortalRequest,
  session: Session | undefined,
  status: number,
  why: string,
  headers: Record<string, string> = {},
): PortalResponse {
  const { context, cookies } = ctx.page(request, session);
  return html(status, context, layout(context, 'Not done', `<p id="problem">${escapeHtml(why)}</p>`), {
    cookies,
    headers,
  });
}

/** A POST's form, if its CSRF checks pass; else the 403 answer. */
export function checkedForm(
  ctx: PortalContext,
  request: PortalRequest,
  session: Session | undefined,
): Readonly<Record<string, string>> | PortalResponse {
  const form = formOf(request);
  const verdict = checkCsrf(request, ctx.deps.signingKey, form[CSRF_FIELD]);
  if (!verdict.ok) {
    ctx.deps.logger.warn('portal: refused a cross-site or tokenless request', {
      why: verdict.why,
      path: request.path,
    });
    return refused(ctx, request, session, 403, `Refused: ${verdict.why}.`);
  }
  return form;
}

export function isResponse(value: unknown): value is PortalResponse {
  return typeof value === 'object' && value !== null && 'status' in value && 'cookies' in value;
}

/** A platform refusal the developer can do nothing about: logged for the provider, a 503 for the developer. */
export function platformTrouble(
  ctx: PortalContext,
  request: PortalRequest,
  session: Session | undefined,
  doing: string,
  failure: AdminFailure,
): PortalResponse {
  const why =
    failure.kind === 'forbidden'
      ? `the portal's platform token may not do this (${failure.message}): it needs the account_management scope with read and write (rw) permission, owned by an admin user`
      : failure.message;
  ctx.deps.logger.error(`portal: the platform refused to ${doing}`, { kind: failure.kind, why });
  return refused(
    ctx,
    request,
    session,
    503,
    `The portal could not ${doing}: ${failure.kind === 'forbidden' ? why : 'the platform did not answer; try again later'}.`,
  );
}

async function publishedPlans(ctx: PortalContext): Promise<Plan[] | undefined> {
  const plans = await ctx.deps.admin.plans(ctx.deps.serviceId);
  return plans.ok ? plans.value.filter((plan) => plan.published) : undefined;
}

export async function homePage(
  ctx: PortalContext,
  request: PortalRequest,
  session: Session | undefined,
): Promise<PortalResponse> {
  if (session !== undefined) return redirect(`${request.base}/app`);
  const { context, cookies } = ctx.page(request, session);
  const plans = await publishedPlans(ctx);
  const invite = request.query.invite;
  const inviteOnly = ctx.deps.settings.signups === 'invite';
  const signup =
    inviteOnly && invite === undefined
      ? '<p>Sign-up is by invitation: ask the provider for one.</p>'
      : postForm(
          context,
          '/signup',
          'Sign up',
          `<label>E-mail <input type="email" name="email" required maxlength="254" autocomplete="email"></label>
<label>Organisation <input name="org" required maxlength="${MAX_ORG}" autocomplete="organization"></label>${invite === undefined ? '' : `<input type="hidden" name="invite" value="${escapeHtml(invite.slice(0, MAX_TOKEN))}">`}`,
        );
  const body = `<h2>Plans</h2>${plans === undefined ? '<p>The plans could not be read just now.</p>' : plansTable(plans)}
<h2>Sign up</h2>${signup}
<h2>Sign in</h2>${postForm(context, '/signin', 'E-mail me a sign-in link', '<label>E-mail <input type="email" name="email" required maxlength="254" autocomplete="email"></label>')}`;
  return html(200, context, layout(context, 'Developer portal', body), { cookies });
}

function checkMail(ctx: PortalContext, request: PortalRequest): PortalResponse {
  const { context, cookies } = ctx.page(request, undefined);
  const body =
    '<p id="check-mail">If the address can receive it, an e-mail is on its way with a link. Open it and press the button on its page within 15 minutes.</p>';
  return html(200, context, layout(context, 'Check your e-mail', body), { cookies });
}

function linkUrl(request: PortalRequest, token: string): string {
  return `${originOf(request)}${request.base}/confirm?token=${encodeURIComponent(token)}`;
}

async function sendOnce(
  ctx: PortalContext,
  email: string,
  kind: MailKind,
  compose: () => Promise<MailMessage>,
): Promise<void> {
  if (!(await mayMail(ctx.deps.counter, ctx.prefix, email, kind))) return;
  try {
    await ctx.deps.mail.send(await compose());
  } catch (error) {
    ctx.deps.logger.error('portal: an e-mail could not be sent', { error: (error as Error).message });
  }
}

function domainAllowed(ctx: PortalContext, email: string): boolean {
  const allowed = ctx.deps.settings.allowedEmailDomains;
  return allowed.length === 0 || allowed.includes(email.slice(email.lastIndexOf('@') + 1));
}

/** Uses the invitation if it is one for this address; another address's attempt leaves it unused. */
async function inviteUsed(ctx: PortalContext, token: string | undefined, email: string): Promise<boolean> {
  if (token === undefined) return false;
  const bounded = token.slice(0, MAX_TOKEN);
  const invite = await ctx.links.peek(bounded);
  if (invite.kind !== 'valid' || invite.facts.purpose !== 'invite' || invite.facts.email !== email)
    return false;
  return (await ctx.links.use(bounded)).kind === 'valid';
}

export async function signUp(ctx: PortalContext, request: PortalRequest): Promise<PortalResponse> {
  const form = checkedForm(ctx, request, undefined);
  if (isResponse(form)) return form;
  const email = normalEmail(form.email);
  const orgName = form.org?.trim().slice(0, MAX_ORG);
  if (email === undefined || !orgName)
    return refused(ctx, request, undefined, 400, 'Give an e-mail address and an organisation.');
  if (!domainAllowed(ctx, email))
    return refused(
      ctx,
      request,
      undefined,
      403,
      'Sign-up is open to some e-mail domains only, and not this one.',
    );
  if (ctx.deps.settings.signups === 'invite' && !(await inviteUsed(ctx, form.invite, email))) {
    return refused(
      ctx,
      request,
      undefined,
      403,
      'Sign-up is by invitation, and this invitation is not valid for this address.',
    );
  }
  const settings = await ctx.deps.admin.settings();
  if (!settings.ok) return platformTrouble(ctx, request, undefined, 'read the sign-up settings', settings);
  if (!settings.value.signupsEnabled) return refused(ctx, request, undefined, 403, 'Sign-up is closed.');
  const limit = await admitSignup(ctx.deps.counter, ctx.prefix, {
    sourceAddress: request.sourceAddress,
    email,
    perHour: ctx.deps.settings.signupsPerHour,
  });
  if (!limit.ok) {
    return refused(ctx, request, undefined, 429, 'Too many sign-ups: try again later.', {
      'retry-after': String(limit.retryAfterSeconds),
    });
  }
  const existing = await ctx.deps.admin.findAccount(email);
  await sendOnce(ctx, email, 'signup', async () =>
    existing.ok
      ? MESSAGES.alreadySignedUp(email, linkUrl(request, await ctx.links.issue({ purpose: 'signin', email })))
      : MESSAGES.confirmSignup(
          email,
          linkUrl(request, await ctx.links.issue({ purpose: 'signup', email, orgName })),
        ),
  );
  return checkMail(ctx, request);
}

export async function signIn(ctx: PortalContext, request: PortalRequest): Promise<PortalResponse> {
  const form = checkedForm(ctx, request, undefined);
  if (isResponse(form)) return form;
  const email = normalEmail(form.email);
  if (email === undefined) return refused(ctx, request, undefined, 400, 'Give an e-mail address.');
  const existing = await ctx.deps.admin.findAccount(email);
  await sendOnce(ctx, email, 'signin', async () =>
    existing.ok
      ? MESSAGES.signIn(email, linkUrl(request, await ctx.links.issue({ purpose: 'signin', email })))
      : MESSAGES.noAccount(email, `${originOf(request)}${request.base}`),
  );
  return checkMail(ctx, request);
}

function gone(ctx: PortalContext, request: PortalRequest): PortalResponse {
  const { context, cookies } = ctx.page(request, undefined);
  const body = `<p id="gone">This link has expired or was already used. <a href="${request.base}">Ask for a new one</a>.</p>`;
  return html(410, context, layout(context, 'Link no longer valid', body), { cookies });
}

/** The e-mail link's page: says what the button does, changes nothing. */
export async function confirmPage(ctx: PortalContext, request: PortalRequest): Promise<PortalResponse> {
  const token = (request.query.token ?? '').slice(0, MAX_TOKEN);
  const link = await ctx.links.peek(token);
  if (link.kind === 'gone') return gone(ctx, request);
  const { context, cookies } = ctx.page(request, undefined);
  const what = link.facts.purpose === 'signup' ? 'Confirm your sign-up' : 'Sign in';
  const body = `<p>${escapeHtml(link.facts.email)}</p>${postForm(context, '/confirm', what, `<input type="hidden" name="token" value="${escapeHtml(token)}">`)}`;
  return html(200, context, layout(context, what, body), { cookies });
}

/** The button: uses the link once (a second POST answers 410), then signs up or signs in. */
export async function confirm(ctx: PortalContext, request: PortalRequest): Promise<PortalResponse> {
  const form = checkedForm(ctx, request, undefined);
  if (isResponse(form)) return form;
  const link = await ctx.links.use((form.token ?? '').slice(0, MAX_TOKEN));
  if (link.kind === 'gone') return gone(ctx, request);
  if (link.facts.purpose === 'signup') return createAccount(ctx, request, link.facts);
  const account = await ctx.deps.admin.findAccount(link.facts.email);
  if (!account.ok) return gone(ctx, request);
  return redirect(`${request.base}/app`, [
    await ctx.sessions.open(request, account.value.id, link.facts.email),
  ]);
}

async function createAccount(
  ctx: PortalContext,
  request: PortalRequest,
  facts: LinkFacts,
): Promise<PortalResponse> {
  const { admin, logger } = ctx.deps;
  const settings = await admin.settings();
  if (!settings.ok) return platformTrouble(ctx, request, undefined, 'read the sign-up settings', settings);
  if (!settings.value.signupsEnabled) return refused(ctx, request, undefined, 403, 'Sign-up is closed.');
  const existing = await admin.findAccount(facts.email);
  if (existing.ok) {
    return redirect(`${request.base}/app`, [
      await ctx.sessions.open(request, existing.value.id, facts.email),
    ]);
  }
  const signedUp = await admin.signup({
    orgName: facts.orgName ?? facts.email,
    username: `dev-${sha256Hex(facts.email).slice(0, 16)}`,
    email: facts.email,
    // porta requires a password even for an account that never signs in there: a random one, discarded.
    password: randomToken(),
  });
  if (!signedUp.ok) return platformTrouble(ctx, request, undefined, 'create your account', signedUp);
  const { account, applications } = signedUp.value;
  // signup.xml subscribes the account to the default plans, which makes an application live at once, even
  // for an account awaiting approval (porta syncs an application from its own state). The portal creates
  // the developer's application itself, after approval; these go, their keys unseen.
  for (const application of applications) {
    const deleted = await admin.deleteApplication(account.id, application.id);
    if (!deleted.ok)
      logger.error('portal: could not delete the application sign-up made', {
        kind: deleted.kind,
        why: deleted.message,
      });
  }
  logger.info('portal: account created', { account: account.id, state: account.state });
  return redirect(`${request.base}/app`, [await ctx.sessions.open(request, account.id, facts.email)]);
}

export async function signOut(
  ctx: PortalContext,
  request: PortalRequest,
  session: Session | undefined,
): Promise<PortalResponse> {
  const form = checkedForm(ctx, request, session);
  if (isResponse(form)) return form;
  if (session !== undefined) await ctx.sessions.close(session);
  const { context, cookies } = ctx.page(request, undefined);
  const body = '<p id="signed-out">You are signed out.</p>';
  // The tab forgets any secret the creating answer handed it.
  return html(200, context, layout(context, 'Signed out', body, 'sessionStorage.clear();'), {
    cookies: [cookieHeader(request, 'session', '', 0), ...cookies],
  });
}

/** `POST /invitations` by the provider (bearer: the portal's admin token): mails an invitation link. */
export async function invite(ctx: PortalContext, request: PortalRequest): Promise<PortalResponse> {
  const bearer = request.headers.authorization?.replace(/^Bearer\s+/i, '');
  if (bearer === undefined || !sameSecret(bearer, ctx.deps.adminToken)) {
    return {
      status: 401,
      headers: { 'content-type': 'application/json', 'cache-control': 'no-store' },
      cookies: [],
      body: '{"message":"Unauthorized"}',
    };
  }
  const email = normalEmail(formOf(request).email);
  if (email === undefined) {
    return {
      status: 400,
      headers: { 'content-type': 'application/json', 'cache-control': 'no-store' },
      cookies: [],
      body: '{"message":"email is required"}',
    };
  }
  const token = await ctx.links.issue({ purpose: 'invite', email }, INVITE_TTL_MS);
  await ctx.deps.mail.send(
    MESSAGES.invitation(email, `${originOf(request)}${request.base}?invite=${encodeURIComponent(token)}`),
  );
  return {
    status: 202,
    headers: { 'content-type': 'application/json', 'cache-control': 'no-store' },
    cookies: [],
    body: '{"message":"invited"}',
  };
}
