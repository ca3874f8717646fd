/** The Account Management API's failure bodies, in porta's three shapes, in XML and in JSON. */
import { describe, expect, it } from 'vitest';
import { AdminApiError } from '../../../local/platform/admin-errors';

const XML = '<?xml version="1.0" encoding="UTF-8"?>';

describe('AdminApiError', () => {
  it("writes validation errors as Rails' full messages, and by field in JSON", () => {
    const error = AdminApiError.invalid({
      org_name: ["can't be blank"],
      plan_id: ['is invalid'],
      base: ['Limit <reached>'],
    });
    expect(error.answer('xml')).toEqual({
      status: 422,
      headers: {},
      body: `${XML}<errors><error>Org name can't be blank</error><error>Plan is invalid</error><error>Limit &lt;reached&gt;</error></errors>`,
    });
    expect(JSON.parse(error.answer('json').body)).toEqual({
      errors: { org_name: ["can't be blank"], plan_id: ['is invalid'], base: ['Limit <reached>'] },
    });
  });

  it('writes render_error as one <error>, and {"error"} in JSON', () => {
    expect(AdminApiError.accessDenied().answer('xml')).toMatchObject({
      status: 403,
      body: `${XML}<error>Access denied</error>`,
    });
    expect(JSON.parse(AdminApiError.tokenPermissions().answer('json').body)).toEqual({
      error: 'Your access token does not have the correct permissions',
    });
  });

  it('answers not found and a missing ability with no XML body, and {"status"} in JSON', () => {
    expect(AdminApiError.notFound().answer('xml')).toEqual({ status: 404, headers: {}, body: '' });
    expect(AdminApiError.forbidden().answer('xml')).toEqual({ status: 403, headers: {}, body: '' });
    expect(JSON.parse(AdminApiError.notFound().answer('json').body)).toEqual({ status: 'Not found' });
    expect(AdminApiError.forbidden().name).toBe('AdminApiError');
  });
});
