import { describe, expect, it } from 'vitest';
import { checkAction } from '../../../../core/soap/action';

const SOAP11 = 'text/xml; charset=utf-8';
const soap12 = (action: string) => `application/soap+xml; charset=utf-8; action="${action}"`;

describe('the SOAP action', () => {
  it('agrees when its last segment names the operation, or its WS-Addressing input name', () => {
    for (const action of [
      '"urn:example:GetQuote"',
      '"http://tempuri.org/IQuotes/GetQuote"',
      '"http://example.com/quotes#GetQuote"',
      '"http://example.com/Quotes/GetQuoteRequest"',
      'GetQuote',
      '""',
      '',
    ]) {
      expect(checkAction(SOAP11, action, 'GetQuote'), action).toEqual({ ok: true });
    }
    expect(checkAction(SOAP11, undefined, 'GetQuote')).toEqual({ ok: true });
    expect(checkAction(soap12('urn:example:GetQuote'), undefined, 'GetQuote')).toEqual({ ok: true });
    expect(checkAction('application/soap+xml', undefined, 'GetQuote')).toEqual({ ok: true });
  });

  it('refuses an action naming another operation, in the SOAP 1.1 header or the SOAP 1.2 content type', () => {
    const refused = { ok: false, detail: 'the SOAP action does not name the operation GetQuote' };
    for (const action of [
      '"urn:example:PlaceOrder"',
      '"urn:example:GetQuote:PlaceOrder"',
      '"urn:GetQuoteX"',
    ]) {
      expect(checkAction(SOAP11, action, 'GetQuote'), action).toEqual(refused);
    }
    expect(checkAction(soap12('urn:example:PlaceOrder'), undefined, 'GetQuote')).toEqual(refused);
    // Both reach the backend, so both must agree.
    expect(checkAction(soap12('urn:example:GetQuote'), '"urn:example:PlaceOrder"', 'GetQuote')).toEqual(
      refused,
    );
    expect(checkAction(`${SOAP11}; action="urn:example:PlaceOrder"`, undefined, 'GetQuote')).toEqual(refused);
  });
});
