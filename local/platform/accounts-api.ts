/**
 * Account Find, Read, List, Delete, Approve, Reject and Reset to Pending (porta's
 * `Admin::Api::AccountsController`). An event the account's state has no move for answers 422
 * `<errors><error>State cannot transition via "approve"</error></errors>`: porta calls the non-bang
 * event, which leaves the error on the account, and its responder answers a PUT with errors so. An
 * account's state change sends the account `updated` webhook; its deletion sends `deleted` for the account
 * and for each of its applications, whose credentials stop working at once.
 */
import type { AccountState } from '../../core/portal/admin-xml';
import { ACCOUNT_STATES, type AccountEvent, type DeveloperAccount, transition } from './accounts';
import { type AdminContext, text } from './admin-context';
import { AdminApiError } from './admin-errors';
import {
  accountAnswerXml,
  accountsAnswerXml,
  accountXml,
  applicationEventXml,
  eventXml,
  type Page,
} from './admin-xml';
import { applicationsOfAccount } from './applications-api';
import type { Answer } from './transactor';

/** "Default and max is 500" (ActiveDocs, Account List). */
const MAX_PER_PAGE = 500;

export function accountOf(context: AdminContext, id: string): DeveloperAccount {
  const account = context.caller.tenant.accounts.get(id);
  if (account === undefined) throw AdminApiError.notFound();
  return account;
}

function ok(body: string): Answer {
  return { status: 200, headers: {}, body };
}

function approvalRequired(context: AdminContext): boolean {
  return context.caller.tenant.settings.account_approval_required;
}

export function accountEventXml(context: AdminContext, action: string, account: DeveloperAccount): string {
  return eventXml(action, 'account', accountXml(account, { approvalRequired: approvalRequired(context) }));
}

export function readAccount(context: AdminContext, [, id]: readonly string[]): Answer {
  return ok(
    accountAnswerXml(accountOf(context, id as string), { approvalRequired: approvalRequired(context) }),
  );
}

/** By `username`, else `user_id`, else `email`; none given, or no match, is 404. */
export function findAccount(context: AdminContext): Answer {
  const { values } = context;
  const username = text(values, 'username');
  const userId = text(values, 'user_id');
  const email = text(values, 'email');
  const query =
    username !== undefined
      ? { username }
      : userId !== undefined
        ? { userId }
        : email !== undefined
          ? { email }
          : undefined;
  const account = query === undefined ? undefined : context.caller.tenant.accounts.find(query);
  if (account === undefined) throw AdminApiError.notFound();
  return ok(accountAnswerXml(account, { approvalRequired: approvalRequired(context) }));
}

/** A positive page number or size; anything else is will_paginate's InvalidPage, which porta answers 404. */
function pageParam(value: string | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  const number = Number(value);
  if (!Number.isSafeInteger(number) || number < 1) throw AdminApiError.notFound();
  return number;
}

export function listAccounts(context: AdminContext): Answer {
  const state = text(context.values, 'state');
  const current = pageParam(text(context.values, 'page'), 1);
  const perPage = Math.min(pageParam(text(context.values, 'per_page'), MAX_PER_PAGE), MAX_PER_PAGE);
  // An unknown state matches no account, as porta's `where(state:)` does.
  const all = context.caller.tenant.accounts.list(state as AccountState | undefined);
  const known = state === undefined || ACCOUNT_STATES.includes(state as AccountState) ? all : [];
  const page: Page = { current, perPage, totalEntries: known.length };
  const shown = known.slice((current - 1) * perPage, current * perPage);
  const options = { approvalRequired: approvalRequired(context) };
  return ok(
    accountsAnswerXml(
      shown.map((account) => accountXml(account, options)),
      page,
    ),
  );
}

export function changeAccountState(context: AdminContext, [, id, event]: readonly string[]): Answer {
  const account = accountOf(context, id as string);
  const outcome = transition(account, event as AccountEvent, context.now);
  if (!outcome.ok) throw AdminApiError.invalid({ state: [outcome.message] });
  context.notify('updated', accountEventXml(context, 'updated', account));
  return readAccount(context, ['', account.id]);
}

/** Deletes the account and its applications; porta answers a DELETE with 200 and no body. */
export function deleteAccount(context: AdminContext, [, id]: readonly string[]): Answer {
  const account = accountOf(context, id as string);
  for (const { service, application } of applicationsOfAccount(context, account.id)) {
    service.removeApplication(application);
    context.notify('deleted', applicationEventXml('deleted', service, application));
  }
  context.caller.tenant.accounts.delete(account.id);
  context.notify('deleted', accountEventXml(context, 'deleted', account));
  return { status: 200, headers: {}, body: '' };
}
