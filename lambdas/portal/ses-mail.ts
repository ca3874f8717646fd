/**
 * The portal's e-mails through Amazon SES (the v2 API's SendEmail, a simple text message), with a
 * deadline. The SDK ships with the Lambda runtime and is loaded on the first e-mail, not at module init.
 */
import type { SESv2Client } from '@aws-sdk/client-sesv2';
import type { MailPort } from '../../core/portal/mail';

export const SES_TIMEOUT_MS = 3000;

export function sesMail(from: string): MailPort {
  let client: SESv2Client | undefined;
  return {
    async send(message) {
      const ses = await import('@aws-sdk/client-sesv2');
      client ??= new ses.SESv2Client({ maxAttempts: 2 });
      await client.send(
        new ses.SendEmailCommand({
          FromEmailAddress: from,
          Destination: { ToAddresses: [message.to] },
          Content: {
            Simple: {
              Subject: { Data: message.subject, Charset: 'UTF-8' },
              Body: { Text: { Data: message.text, Charset: 'UTF-8' } },
            },
          },
        }),
        { abortSignal: AbortSignal.timeout(SES_TIMEOUT_MS) },
      );
    },
  };
}
