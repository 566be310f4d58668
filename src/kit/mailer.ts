// Mail Patchbay sends (invitations), over SMTP with nodemailer when PATCHBAY_SMTP_URL is set.
// Without it nothing is mailed and the inviter copies the link the API answers with.
import nodemailer from 'nodemailer'

export interface Mail {
  to: string
  subject: string
  text: string
}

export interface Mailer {
  send(mail: Mail): Promise<void>
  close(): void
}

/**
 * An SMTP mailer: `smtp://user:pass@host:587` (STARTTLS when the server offers it) or
 * `smtps://…:465` (TLS from the start); nodemailer reads the rest of the address's options.
 */
export function smtpMailer(url: string, from: string): Mailer {
  const transport = nodemailer.createTransport(url)
  return {
    async send(mail) {
      await transport.sendMail({ from, to: mail.to, subject: mail.subject, text: mail.text })
    },
    close: () => transport.close(),
  }
}
