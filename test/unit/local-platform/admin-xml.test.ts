/** The Account Management API's XML, element for element in the order of porta's to_xml methods. */
import { describe, expect, it } from 'vitest';
import { AccountBook } from '../../../local/platform/accounts';
import { accountXml, applicationXml, eventXml, planXml, xmlTime } from '../../../local/platform/admin-xml';
import { Application, type PlanInfo, Service } from '../../../local/platform/model';

const AT = Date.UTC(2026, 10, 28, 13, 0, 5, 250);

function service(authentication: 'user_key' | 'app_id' | 'oidc') {
  return new Service({
    id: 'svc',
    providerKey: 'pk',
    authentication,
    state: 'active',
    metrics: [{ name: 'hits', children: [] }],
    plans: [{ name: 'Basic', limits: [], default: true, approvalRequired: false, published: true }],
    applications: [],
  });
}

describe('admin XML', () => {
  it('writes times as Rails xmlschema in UTC, whole seconds', () => {
    expect(xmlTime(AT)).toBe('2026-11-28T13:00:05Z');
  });

  it('writes an application plan as ApplicationPlan#to_xml does', () => {
    const owner = service('user_key');
    expect(planXml(owner, owner.planInfo.get('Basic') as PlanInfo)).toBe(
      '<plan custom="false" default="true"><id>Basic</id><name>Basic</name><type>application_plan</type>' +
        '<state>published</state><approval_required>false</approval_required><setup_fee>0.0</setup_fee>' +
        '<cost_per_month>0.0</cost_per_month><trial_period_days>0</trial_period_days>' +
        '<cancellation_period>0</cancellation_period><service_id>svc</service_id></plan>',
    );
  });

  it('writes a user_key application and an app_id one with its keys, escaping their text', () => {
    const app = new Application('7', 'k&y', new Set(), 'Basic', 'pending', []);
    app.accountId = '3';
    app.name = 'A <b>';
    app.createdAt = AT;
    expect(applicationXml(service('user_key'), app)).toMatch(
      /^<application><id>7<\/id><created_at>2026-11-28T13:00:05Z<\/created_at><updated_at>2026-11-28T13:00:05Z<\/updated_at><state>pending<\/state><user_account_id>3<\/user_account_id><service_id>svc<\/service_id><user_key>k&amp;y<\/user_key><plan .*<\/plan><name>A &lt;b&gt;<\/name><description><\/description><\/application>$/,
    );
    const keyed = new Application('abcd1234', undefined, new Set(['k1', 'k2']), 'Basic', 'active', []);
    expect(applicationXml(service('app_id'), keyed)).toContain(
      '<state>live</state><service_id>svc</service_id><application_id>abcd1234</application_id><keys><key>k1</key><key>k2</key></keys><plan',
    );
    expect(applicationXml(service('oidc'), keyed)).toContain('<redirect_url></redirect_url><keys>');
  });

  it('writes an account with its account plan and users, and wraps an object in a webhook event', () => {
    const account = new AccountBook(() => '9').create(
      { orgName: 'O "&" Co', username: 'u', email: 'u@example.com', approvalRequired: true },
      AT,
    );
    const xml = accountXml(account, { approvalRequired: true });
    expect(xml).toBe(
      '<account><id>9</id><created_at>2026-11-28T13:00:05Z</created_at><updated_at>2026-11-28T13:00:05Z</updated_at>' +
        '<state>created</state><org_name>O &quot;&amp;&quot; Co</org_name>' +
        '<monthly_billing_enabled>true</monthly_billing_enabled><monthly_charging_enabled>true</monthly_charging_enabled>' +
        '<credit_card_stored>false</credit_card_stored><plans><plan default="true"><id>Default</id><name>Default</name>' +
        '<type>account_plan</type><state>published</state><approval_required>true</approval_required>' +
        '<setup_fee>0.0</setup_fee><cost_per_month>0.0</cost_per_month><trial_period_days>0</trial_period_days>' +
        '<cancellation_period>0</cancellation_period></plan></plans><users><user><id>9</id>' +
        '<created_at>2026-11-28T13:00:05Z</created_at><updated_at>2026-11-28T13:00:05Z</updated_at>' +
        '<account_id>9</account_id><state>pending</state><role>admin</role><username>u</username>' +
        '<email>u@example.com</email></user></users></account>',
    );
    expect(eventXml('updated', 'account', xml)).toBe(
      `<?xml version="1.0" encoding="UTF-8"?><event><action>updated</action><type>account</type><object>${xml}</object></event>`,
    );
  });
});
