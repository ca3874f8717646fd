/**
 * `/portal/docs`: the API's Swagger UI (the generated Swagger 2.0 document) with the signed-in developer's
 * credentials filled in, as porta's ActiveDocs fills them (`ApiDocs::AccountData`, served to the
 * signed-in buyer only), but through Swagger UI's own hooks: `preauthorizeApiKey` for a key, `initOAuth`
 * for a client id and secret. Ids are filled whenever signed in; secrets only in the tab that created
 * them (handed over in sessionStorage by the creating answer), unless the provider chose `always`, when
 * `credentials.json` carries them too. Signed out, the page says to sign in.
 */

import { SECRETS_ITEM } from './application-routes';
import { html, json, type PortalContext } from './context';
import { MODE_VIEWS } from './credentials-view';
import type { PortalRequest, PortalResponse } from './http';
import { layout } from './pages';
import type { Session } from './sessions';

/** The files under `/portal/docs/` the portal serves itself; the rest are Swagger UI's and the document. */
export const CREDENTIALS_FILE = 'credentials.json';

function startScript(base: string, builtInIssuer: boolean): string {
  return `(function () {
  var base = ${JSON.stringify(base)};
  var note = document.getElementById('fill-note');
  function say(text, link) {
    note.textContent = text;
    if (link) { var a = document.createElement('a'); a.href = base; a.textContent = ' ' + link; note.appendChild(a); }
  }
  function fill(ui) {
    fetch(base + '/docs/${CREDENTIALS_FILE}', { credentials: 'same-origin' }).then(function (r) { return r.json(); }).then(function (c) {
      if (!c.signedIn) return say('Sign in to fill in your credentials.', 'Sign in');
      var app = c.applications[0];
      if (!app) return say('Create an application to fill in your credentials.');
      var kept = JSON.parse(sessionStorage.getItem(${JSON.stringify(SECRETS_ITEM)}) || '{}')[app.id] || {};
      var s = Object.assign({}, kept, app.secrets || {});
      var filled = [];
      if (c.mode === 'user_key' && s.user_key) { ui.preauthorizeApiKey('user_key', s.user_key); filled.push('user key'); }
      if (c.mode === 'app_id') {
        ui.preauthorizeApiKey('app_id', app.ids.app_id); filled.push('app id');
        if (s.app_key) { ui.preauthorizeApiKey('app_key', s.app_key); filled.push('app key'); }
      }
      if (c.mode === 'oauth' && ${builtInIssuer}) {
        ui.initOAuth({ clientId: app.ids.client_id, clientSecret: s.client_secret });
        filled.push(s.client_secret ? 'client id and secret' : 'client id');
      }
      say(filled.length ? 'Filled in: ' + filled.join(', ') + '.' : 'Your secret is filled in only in the tab where it was shown; paste it in Authorize.');
    }, function () { say('Your credentials could not be read.'); });
  }
  var ui = SwaggerUIBundle({
    url: base + '/docs/swagger.json', dom_id: '#swagger-ui', layout: 'BaseLayout',
    deepLinking: false, validatorUrl: null, onComplete: function () { fill(ui); }
  });
  window.ui = ui;
})();`;
}

export function docsPage(
  ctx: PortalContext,
  request: PortalRequest,
  session: Session | undefined,
): PortalResponse {
  const { context, cookies } = ctx.page(request, session);
  const base = request.base;
  const body = `<link rel="stylesheet" href="${base}/docs/swagger-ui.css">
<p id="fill-note" class="note">Reading your credentials…</p><div id="swagger-ui"></div>
<script src="${base}/docs/swagger-ui-bundle.js"></script>`;
  return html(
    200,
    context,
    layout(context, 'Documentation', body, startScript(base, ctx.deps.builtInIssuer)),
    { cookies },
  );
}

/** The signed-in developer's ids (and secrets, when the provider chose `always`), never cached. */
export async function docsCredentials(
  ctx: PortalContext,
  session: Session | undefined,
): Promise<PortalResponse> {
  if (session === undefined) return json(401, { signedIn: false });
  const { admin, credentialMode, settings } = ctx.deps;
  const account = await admin.account(session.accountId);
  const applications =
    account.ok && account.value.state === 'approved' ? await ctx.applications(session.accountId) : undefined;
  const view = MODE_VIEWS[credentialMode];
  const idName = credentialMode === 'oauth' ? 'client_id' : 'app_id';
  const secretName = { user_key: 'user_key', app_id: 'app_key', oauth: 'client_secret' }[credentialMode];
  const list = (applications?.ok ? applications.value : []).map((application) => {
    const parts = view.parts(application);
    const id = parts.ids[0]?.[1];
    const secret = parts.secrets.at(-1)?.[1];
    return {
      id: application.id,
      ids: id === undefined ? {} : { [idName]: id },
      ...(settings.keyReveal === 'always' && secret !== undefined && { secrets: { [secretName]: secret } }),
    };
  });
  return json(200, { signedIn: true, mode: credentialMode, applications: list });
}
