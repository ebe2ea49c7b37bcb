export { composeMessage } from './compose.ts';
export { createMailer, type Mailer } from './mailer.ts';
