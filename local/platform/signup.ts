/**
 * Signup Express (porta's `Admin::Api::SignupsController#create`, `POST /admin/api/signup.xml`): creates
 * a developer account with its admin user and, for each service with a default application plan (or
 * the plan `application_plan_id` names), an application "API signup" with generated credentials
 * (`Signup::PlansWithDefaults`, the controller's `defaults`). Answers 201 with the account and its
 * applications (`with_apps`).
 *
 * The account follows the provider's `account_approval_required`: without it the account is `approved`
 * and its user `active` at once (`User#activate_on_minimal?`, `Account#upgrade_state!`); with it the
 * account stays `created` and its user `pending` until approved. Like porta's API, this call does not
 * read `signups_enabled`: that setting closes the developer portal's own sign-up form
 * (`DeveloperPortal::SignupController`), so a portal must read it and refuse itself. No password is
 * kept; one must be given, as porta asks.
 */
import { accountEventXml } from './accounts-api';
import { type AdminContext, text } from './admin-context';
import { AdminApiError } from './admin-errors';
import { accountAnswerXml, userEventXml } from './admin-xml';
import { type AccountApplication, addApplication, namedPlan } from './applications-api';
import { emptyParamHash } from './params';
import type { Answer } from './transactor';

/** porta's `RE_LOGIN_OK` (`app/lib/authentication.rb`). */
const USERNAME = /^\w[\w.\-_@+]+$/;
const SIGNUP_APPLICATION = 'API signup';

function validate(context: AdminContext) {
  const { values } = context;
  const orgName = text(values, 'org_name');
  const username = text(values, 'username') ?? '';
  const email = text(values, 'email') ?? '';
  const errors: Record<string, string[]> = {};
  if (orgName === undefined) errors.org_name = ["can't be blank"];
  if (username.length < 3) errors.username = ['is too short (minimum is 3 characters)'];
  else if (username.length > 40) errors.username = ['is too long (maximum is 40 characters)'];
  else if (!USERNAME.test(username)) errors.username = ['use only letters, numbers, and .-_@+ please.'];
  if (email === '') errors.email = ["can't be blank"];
  else if (email.length < 6) errors.email = ['is too short (minimum is 6 characters)'];
  else if (email.length > 255) errors.email = ['is too long (maximum is 255 characters)'];
  if (text(values, 'password') === undefined) errors.password = ["can't be blank"];
  for (const field of context.caller.tenant.accounts.taken(username, email)) {
    errors[field] = [...(errors[field] ?? []), 'has already been taken'];
  }
  if (Object.keys(errors).length > 0) throw AdminApiError.invalid(errors);
  return { orgName: orgName as string, username, email };
}

export function signup(context: AdminContext): Answer {
  const chosen = namedPlan(context, 'application_plan_id');
  const input = validate(context);
  const { tenant } = context.caller;
  const approvalRequired = tenant.settings.account_approval_required;
  const account = tenant.accounts.create({ ...input, approvalRequired }, context.now);
  context.notify('created', accountEventXml(context, 'created', account));
  for (const user of account.users) context.notify('created', userEventXml('created', user, account.id));
  const applications: AccountApplication[] = [];
  for (const service of context.services) {
    const plan =
      chosen?.service === service
        ? chosen.plan
        : [...service.planInfo.values()].find((candidate) => candidate.default);
    if (plan === undefined) continue;
    const application = addApplication(context, {
      choice: { service, plan },
      accountId: account.id,
      name: SIGNUP_APPLICATION,
      description: SIGNUP_APPLICATION,
      credentials: emptyParamHash(),
    });
    applications.push({ service, application });
  }
  return { status: 201, headers: {}, body: accountAnswerXml(account, { approvalRequired, applications }) };
}
