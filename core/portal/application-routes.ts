/**
 * The application page, after porta's single-application "access details" (`/admin/access_details`):
 * the account's state (pending, declined, approved), then its application with plan, limits and this
 * period's usage, and the actions on it. The application is created by the developer once the account is
 * approved, never before: porta syncs an application from its own state, not its account's, so an
 * application made while the account is pending would already work at the gateway.
 */
import { checkedForm, isResponse, platformTrouble, refused } from './account-routes';
import type { Application, Plan } from './admin-xml';
import { html, type PortalContext, redirect } from './context';
import { type CredentialParts, MODE_VIEWS } from './credentials-view';
import { escapeHtml, type PortalRequest, type PortalResponse } from './http';
import { finishRolls, KeyRolls, type PendingRoll } from './key-rolls';
import { layout, type PageContext, planSelect, postForm } from './pages';
import { fingerprint, randomHex } from './secrets';
import type { Session } from './sessions';

/** The sessionStorage item the creating answer fills, for the docs in the same tab. */
export const SECRETS_ITEM = 'portal-secrets';

function applicationField(application: Application): string {
  return `<input type="hidden" name="application" value="${escapeHtml(application.id)}">`;
}

function usageTable(
  reports: readonly { metric: string; period: string; currentValue: number; maxValue: number }[],
): string {
  if (reports.length === 0) return '<p>This plan sets no limit.</p>';
  const rows = reports
    .map(
      (r) =>
        `<tr><td>${escapeHtml(r.metric)}</td><td>${escapeHtml(r.period)}</td><td>${r.currentValue}</td><td>${r.maxValue}</td></tr>`,
    )
    .join('');
  return `<table class="usage"><tr><th>Metric</th><th>Period</th><th>Used</th><th>Limit</th></tr>${rows}</table>`;
}

async function usageOf(ctx: PortalContext, application: Application): Promise<string> {
  const credential = MODE_VIEWS[ctx.deps.credentialMode].credential(application);
  if (credential === undefined) return '';
  const outcome = await ctx.deps.usage(credential);
  if (outcome.kind !== 'authorized' && outcome.kind !== 'denied')
    return '<p>Usage could not be read just now.</p>';
  return usageTable(outcome.usageReports);
}

function rollNote(ctx: PortalContext): string {
  const { credentialMode, settings } = ctx.deps;
  if (MODE_VIEWS[credentialMode].roll === 'replace')
    return 'Rolling makes a new key; the current one stops working at once.';
  const hours = settings.rollGraceSeconds / 3600;
  return settings.rollGraceSeconds === 0
    ? 'Rolling adds a new key and deletes the current one at once.'
    : `Rolling adds a new key; the current one keeps working for ${hours} hour(s), then is deleted.`;
}

function pendingRollsPart(
  context: PageContext,
  application: Application,
  pending: readonly PendingRoll[],
): string {
  if (pending.length === 0) return '';
  const until = new Date(Math.max(...pending.map((roll) => roll.dueAt))).toISOString();
  return `<p id="old-key">The previous key works until ${until}.</p>${postForm(context, '/app/old-keys', 'Delete the previous key now', applicationField(application))}`;
}

function credentialsPart(parts: CredentialParts): string {
  const ids = parts.ids.map(
    ([label, value]) => `<p>${escapeHtml(label)}: <code class="id">${escapeHtml(value)}</code></p>`,
  );
  const secrets = parts.secrets.map(
    ([label, value]) =>
      `<p>${escapeHtml(label)}: <code class="fingerprint">${escapeHtml(fingerprint(value))}</code> <span class="note">(shown once, when made)</span></p>`,
  );
  return [...ids, ...secrets].join('');
}

async function applicationPart(
  ctx: PortalContext,
  context: PageContext,
  application: Application,
  rolls: KeyRolls,
  accountId: string,
): Promise<string> {
  const view = MODE_VIEWS[ctx.deps.credentialMode];
  const pending = view.roll === 'overlap' ? await rolls.of(accountId, application.id) : [];
  return `<section class="application" data-application="${escapeHtml(application.id)}">
<h2>${escapeHtml(application.name)}</h2>
<p>Plan: <strong class="plan">${escapeHtml(application.planName)}</strong> · state: ${escapeHtml(application.state)}</p>
${credentialsPart(view.parts(application))}
<h3>This period's usage</h3>${await usageOf(ctx, application)}
${pendingRollsPart(context, application, pending)}
<p class="note">${escapeHtml(rollNote(ctx))}</p>${postForm(context, '/app/roll', 'Roll the key', applicationField(application))}
${postForm(context, '/app/delete', 'Delete this application', applicationField(application))}
</section>`;
}

function createForm(context: PageContext, plans: readonly Plan[]): string {
  return `<h2>Create your application</h2>${postForm(context, '/app', 'Create application', planSelect(plans))}`;
}

type Approved =
  | { readonly ok: true; readonly orgName: string }
  | { readonly ok: false; readonly answer: PortalResponse };

/** The account, if approved; else the page that says why not (pending, declined) or that it is gone. */
async function approvedAccount(
  ctx: PortalContext,
  request: PortalRequest,
  session: Session,
): Promise<Approved> {
  const account = await ctx.deps.admin.account(session.accountId);
  if (!account.ok) {
    if (account.kind !== 'not_found')
      return { ok: false, answer: platformTrouble(ctx, request, session, 'read your account', account) };
    await ctx.sessions.close(session);
    return { ok: false, answer: redirect(request.base) };
  }
  const { state, orgName } = account.value;
  if (state === 'approved') return { ok: true, orgName };
  const { context, cookies } = ctx.page(request, session);
  const [title, text] =
    state === 'rejected'
      ? ['Sign-up declined', '<p id="rejected">The provider declined your sign-up.</p>']
      : state === 'created' || state === 'pending'
        ? [
            'Awaiting approval',
            '<p id="pending">Your account awaits the provider’s approval. You will get an e-mail when it is approved; then reload this page.</p>',
          ]
        : ['Account not active', `<p id="inactive">Your account is ${escapeHtml(state)}.</p>`];
  return { ok: false, answer: html(200, context, layout(context, title, text), { cookies }) };
}

export async function applicationPage(
  ctx: PortalContext,
  request: PortalRequest,
  session: Session | undefined,
): Promise<PortalResponse> {
  if (session === undefined) return redirect(request.base);
  const approved = await approvedAccount(ctx, request, session);
  if (!approved.ok) return approved.answer;
  const applications = await ctx.applications(session.accountId);
  if (!applications.ok) return platformTrouble(ctx, request, session, 'read your applications', applications);
  const { context, cookies } = ctx.page(request, session);
  const rolls = new KeyRolls(ctx.deps.redis, ctx.prefix);
  const parts: string[] = [];
  for (const application of applications.value)
    parts.push(await applicationPart(ctx, context, application, rolls, session.accountId));
  if (applications.value.length === 0 || ctx.deps.settings.multipleApplications) {
    const plans = await ctx.deps.admin.plans(ctx.deps.serviceId);
    parts.push(createForm(context, plans.ok ? plans.value.filter((plan) => plan.published) : []));
  }
  return html(
    200,
    context,
    layout(
      context,
      'Your application',
      `<p>Signed in as ${escapeHtml(session.email)}.</p>${parts.join('\n')}`,
    ),
    { cookies },
  );
}

/** Which definition of the docs each secret fills, by mode (lambdas/docs/swagger.ts names them). */
const SECRET_DEFINITION = { user_key: 'user_key', app_id: 'app_key', oauth: 'client_secret' } as const;

/** The creating answer: the secrets, this once, and (by default) handed to this tab for the docs. */
function credentialsShown(
  ctx: PortalContext,
  request: PortalRequest,
  session: Session,
  application: Application,
  status: number,
  note: string,
): PortalResponse {
  const { context, cookies } = ctx.page(request, session);
  const parts = MODE_VIEWS[ctx.deps.credentialMode].parts(application);
  const ids = parts.ids.map(
    ([label, value]) => `<p>${escapeHtml(label)}: <code class="id">${escapeHtml(value)}</code></p>`,
  );
  const secret = parts.secrets.at(-1);
  const shown =
    secret === undefined
      ? ''
      : `<p>${escapeHtml(secret[0])}:</p><code class="secret" id="secret">${escapeHtml(secret[1])}</code>`;
  const body = `<p id="shown-once"><strong>Copy it now: this is the only time it is shown.</strong> Afterwards the page shows its fingerprint only.</p>
${ids.join('')}${shown}<p class="note">${escapeHtml(note)}</p>
<p><a href="${request.base}/docs">Try it in the documentation</a> · <a href="${request.base}/app">Your application</a></p>`;
  const handOver =
    ctx.deps.settings.keyReveal === 'creating-tab' && secret !== undefined
      ? `(function(){var all=JSON.parse(sessionStorage.getItem(${JSON.stringify(SECRETS_ITEM)})||'{}');all[${JSON.stringify(application.id)}]=${JSON.stringify({ [SECRET_DEFINITION[ctx.deps.credentialMode]]: secret[1] }).replace(/</g, '\\u003c')};sessionStorage.setItem(${JSON.stringify(SECRETS_ITEM)},JSON.stringify(all));})();`
      : '';
  return html(status, context, layout(context, 'Your credentials', body, handOver), { cookies });
}

export async function createApplication(
  ctx: PortalContext,
  request: PortalRequest,
  session: Session | undefined,
): Promise<PortalResponse> {
  if (session === undefined) return redirect(request.base);
  const form = checkedForm(ctx, request, session);
  if (isResponse(form)) return form;
  const approved = await approvedAccount(ctx, request, session);
  if (!approved.ok)
    return approved.answer.status === 200
      ? refused(ctx, request, session, 403, 'Your account is not approved yet.')
      : approved.answer;
  const { admin, settings, serviceId, credentialMode } = ctx.deps;
  const existing = await ctx.applications(session.accountId);
  if (!existing.ok) return platformTrouble(ctx, request, session, 'read your applications', existing);
  if (!settings.multipleApplications && existing.value.length > 0) {
    return refused(
      ctx,
      request,
      session,
      409,
      'You already have an application: one application per account.',
    );
  }
  const plans = await admin.plans(serviceId);
  if (!plans.ok) return platformTrouble(ctx, request, session, 'read the plans', plans);
  const published = plans.value.filter((plan) => plan.published);
  const plan =
    published.find((p) => p.id === form.plan) ?? published.find((p) => p.isDefault) ?? published[0];
  if (plan === undefined) return refused(ctx, request, session, 409, 'No plan is published yet.');
  const created = await admin.createApplication(session.accountId, {
    serviceId,
    planId: plan.id,
    name: `${approved.orgName} application ${existing.value.length + 1}`,
    ...(credentialMode !== 'user_key' && { applicationKey: randomHex(16) }),
  });
  if (!created.ok) {
    if (created.kind === 'invalid')
      return refused(ctx, request, session, 409, `The platform refused: ${created.message}.`);
    return platformTrouble(ctx, request, session, 'create your application', created);
  }
  ctx.deps.logger.info('portal: application created', {
    account: session.accountId,
    application: created.value.id,
  });
  const note =
    created.value.state === 'pending'
      ? 'This plan needs the provider’s approval: the key works once it is given.'
      : 'It works now.';
  return credentialsShown(ctx, request, session, created.value, 201, note);
}

type ApplicationAction = (
  ctx: PortalContext,
  request: PortalRequest,
  session: Session,
  application: Application,
) => Promise<PortalResponse>;

/** A POST on one of the account's applications, named by the form: signed in, CSRF-checked, found. */
function onApplication(act: ApplicationAction) {
  return async (
    ctx: PortalContext,
    request: PortalRequest,
    session: Session | undefined,
  ): Promise<PortalResponse> => {
    if (session === undefined) return redirect(request.base);
    const form = checkedForm(ctx, request, session);
    if (isResponse(form)) return form;
    const application = await namedApplication(ctx, session, form.application);
    if (application === undefined) return refused(ctx, request, session, 404, 'No such application.');
    return act(ctx, request, session, application);
  };
}

/** The application a form names, among the account's. */
async function namedApplication(
  ctx: PortalContext,
  session: Session,
  id: string | undefined,
): Promise<Application | undefined> {
  const applications = await ctx.applications(session.accountId);
  return applications.ok ? applications.value.find((app) => app.id === id) : undefined;
}

export const rollKey = onApplication(async (ctx, request, session, application) => {
  const { admin, cache, credentialMode, settings, now } = ctx.deps;
  const newKey = randomHex(16);
  if (MODE_VIEWS[credentialMode].roll === 'replace') {
    const changed = await admin.changeUserKey(session.accountId, application.id, newKey);
    if (!changed.ok) return platformTrouble(ctx, request, session, 'roll your key', changed);
    if (application.userKey !== undefined)
      await cache.refuse({ kind: 'user_key', userKey: application.userKey });
    return credentialsShown(
      ctx,
      request,
      session,
      changed.value,
      200,
      'Your previous key stopped working now.',
    );
  }
  const oldKeys = application.keys;
  let added = await admin.addKey(session.accountId, application.id, newKey);
  let note: string;
  if (!added.ok && added.kind === 'invalid' && oldKeys.length > 0) {
    // An OAuth application has one client secret at most (porta's Cinstance#keys_limit): replace it at once.
    for (const key of oldKeys) await admin.deleteKey(session.accountId, application.id, key);
    added = await admin.addKey(session.accountId, application.id, newKey);
    note = 'The platform allows one secret at a time: your previous one stopped working now.';
  } else if (settings.rollGraceSeconds === 0) {
    for (const key of oldKeys) await admin.deleteKey(session.accountId, application.id, key);
    note = 'Your previous key stopped working now.';
  } else {
    const rolls = new KeyRolls(ctx.deps.redis, ctx.prefix);
    for (const key of oldKeys)
      await rolls.schedule(session.accountId, application.id, key, now() + settings.rollGraceSeconds * 1000);
    note = `Your previous key keeps working until ${new Date(now() + settings.rollGraceSeconds * 1000).toISOString()}; you can delete it sooner on your application's page.`;
  }
  if (!added.ok) return platformTrouble(ctx, request, session, 'roll your key', added);
  if (application.applicationId !== undefined) {
    const keys = await admin.keys(session.accountId, application.id);
    if (keys.ok) await cache.keysKept(application.applicationId, keys.value);
  }
  return credentialsShown(ctx, request, session, { ...application, keys: [newKey] }, 200, note);
});

export const deleteOldKeys = onApplication(async (ctx, request, session, application) => {
  const rolls = new KeyRolls(ctx.deps.redis, ctx.prefix);
  await finishRolls(ctx.deps, rolls, await rolls.of(session.accountId, application.id));
  return redirect(`${request.base}/app`);
});

export const deleteApplication = onApplication(async (ctx, request, session, application) => {
  const deleted = await ctx.deps.admin.deleteApplication(session.accountId, application.id);
  if (!deleted.ok) return platformTrouble(ctx, request, session, 'delete your application', deleted);
  const credential = MODE_VIEWS[ctx.deps.credentialMode].credential(application);
  if (credential !== undefined) await ctx.deps.cache.refuse(credential);
  return redirect(`${request.base}/app`);
});

/** Deletes the old keys whose grace has ended (called as requests come). */
export async function finishDueRolls(ctx: PortalContext): Promise<void> {
  const rolls = new KeyRolls(ctx.deps.redis, ctx.prefix);
  const due = await rolls.due(ctx.deps.now());
  if (due.length > 0) await finishRolls(ctx.deps, rolls, due);
}
