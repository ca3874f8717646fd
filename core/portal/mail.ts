/**
 * The portal's e-mails, through a port: Amazon SES in AWS, the local mail sink under `npm start`. Each
 * message says one thing and carries at most one link; no message carries a credential.
 */

export interface MailMessage {
  readonly to: string;
  readonly subject: string;
  readonly text: string;
}

export interface MailPort {
  send(message: MailMessage): Promise<void>;
}

/** The words of each e-mail, by what it is for. */
export const MESSAGES = {
  confirmSignup: (to: string, link: string): MailMessage => ({
    to,
    subject: 'Confirm your sign-up',
    text: `Open this link to confirm your sign-up, then press the button on the page (valid 15 minutes):\n\n${link}\n\nIf you did not sign up, ignore this e-mail.`,
  }),
  alreadySignedUp: (to: string, link: string): MailMessage => ({
    to,
    subject: 'You already have an account',
    text: `Someone (perhaps you) tried to sign up with this address, which already has an account. To sign in, open this link and press the button (valid 15 minutes):\n\n${link}`,
  }),
  signIn: (to: string, link: string): MailMessage => ({
    to,
    subject: 'Your sign-in link',
    text: `Open this link and press the button to sign in (valid 15 minutes):\n\n${link}\n\nIf you did not ask to sign in, ignore this e-mail.`,
  }),
  noAccount: (to: string, link: string): MailMessage => ({
    to,
    subject: 'Sign-in requested',
    text: `Someone (perhaps you) asked to sign in with this address, which has no account. To sign up, go to:\n\n${link}`,
  }),
  invitation: (to: string, link: string): MailMessage => ({
    to,
    subject: 'You are invited to sign up',
    text: `You are invited to sign up to the developer portal. Open this link (valid 7 days):\n\n${link}`,
  }),
  approved: (to: string, link: string): MailMessage => ({
    to,
    subject: 'Your account is approved',
    text: `Your account is approved. Sign in to create your application and get its key:\n\n${link}`,
  }),
  rejected: (to: string): MailMessage => ({
    to,
    subject: 'Your sign-up was declined',
    text: 'The provider declined your sign-up. Reply to the provider if you think this is a mistake.',
  }),
} as const;
