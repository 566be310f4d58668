// A real SMTP server (the smtp-server package) on loopback that keeps every mail it receives, for
// tests of what Patchbay mails (invitations).
import type { AddressInfo } from 'node:net'
import { SMTPServer } from 'smtp-server'
import { eventually } from './receiver.ts'

export interface ReceivedMail {
  from: string
  to: string[]
  /** The raw message: headers and body. */
  raw: string
}

export interface Mailbox {
  /** smtp://127.0.0.1:<port>: PATCHBAY_SMTP_URL. */
  url: string
  mails: ReceivedMail[]
  /** Waits for a mail to this address and answers it. */
  mailTo(address: string): Promise<ReceivedMail>
  close(): Promise<void>
}

export async function startMailbox(): Promise<Mailbox> {
  const mails: ReceivedMail[] = []
  const server = new SMTPServer({
    // Plain SMTP on loopback: no TLS to negotiate, no login.
    disabledCommands: ['STARTTLS', 'AUTH'],
    logger: false,
    onData(stream, session, callback) {
      const chunks: Buffer[] = []
      stream.on('data', (c: Buffer) => chunks.push(c))
      stream.on('end', () => {
        mails.push({
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
          to: session.envelope.rcptTo.map((r) => r.address),
          raw: Buffer.concat(chunks).toString('utf8'),
        })
        callback()
      })
    },
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()))
  const port = (server.server.address() as AddressInfo).port
  return {
    url: `smtp://127.0.0.1:${port}`,
    mails,
    async mailTo(address) {
      const found = await eventually(
        async () => mails.find((m) => m.to.includes(address)),
        (m) => m !== undefined,
      )
      return found!
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  }
}
