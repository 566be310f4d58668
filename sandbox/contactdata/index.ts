// The contact-data emulator: a local stand-in for the B2B enrichment upstream with a generated
// dataset, API keys, credits, per-plan rate limits and a control API. Imports nothing from src/.
import { createEmulator, type Emulator, listen } from '../common/emulator-app.ts'
import { Rng } from '../common/rng.ts'
import { Accounts, DEMO_ACCOUNT } from './accounts.ts'
import { registerControlRoutes } from './control.ts'
import { defaultDataset, SHOWCASE } from './dataset.ts'
import { Directory } from './directory.ts'
import { sendError } from './errors.ts'
import { registerApiRoutes } from './routes.ts'
import { Usage } from './usage.ts'

export interface ContactdataSandbox {
  url: string
  demo: {
    apiKey: string
    accountName: string
    plan: string
    credits: number
    samplePerson: { email: string; linkedInUrl: string; firstName: string; lastName: string; company: string }
    sampleCompany: { domain: string; name: string }
  }
  dataset: { people: number; companies: number }
  emulator: Emulator
  close(): Promise<void>
}

const SEED_RNG_SEED = 0x5eed5

export const DEMO: ContactdataSandbox['demo'] = {
  apiKey: DEMO_ACCOUNT.apiKey,
  accountName: DEMO_ACCOUNT.name,
  plan: DEMO_ACCOUNT.plan,
  credits: DEMO_ACCOUNT.credits,
  samplePerson: {
    email: SHOWCASE.personWithPhone.emails[0].address,
    linkedInUrl: SHOWCASE.personWithPhone.socialProfiles.linkedin!,
    firstName: SHOWCASE.personWithPhone.firstName,
    lastName: SHOWCASE.personWithPhone.lastName,
    company: SHOWCASE.personWithPhone.company.name,
  },
  sampleCompany: { domain: SHOWCASE.company.domain, name: SHOWCASE.company.name },
}

/** Builds the emulator without listening, for a host that mounts several emulators itself. */
export function createContactdataEmulator(): {
  emulator: Emulator
  directory: () => Directory
  accounts: Accounts
} {
  // Built at the first request that reads it: generating and indexing the 12,000 records costs
  // about a third of a second, which a start that serves no contact-data request need not pay.
  let directory: Directory | null = null
  let seedRng = new Rng(SEED_RNG_SEED)
  // The shell needs the reset callback before the state it resets exists.
  let resetState = () => {}
  const emulator = createEmulator({
    sendError: (reply, status, message) => sendError(reply, status, message),
    reset: () => resetState(),
  })
  const accounts = new Accounts(emulator.clock)
  const usage = new Usage(emulator.clock)
  usage.attach(emulator.app.server)
  resetState = () => {
    directory = null
    seedRng = new Rng(SEED_RNG_SEED)
    accounts.reset()
    usage.reset()
  }
  const getDirectory = () => (directory ??= new Directory(defaultDataset()))
  registerApiRoutes(emulator.app, { clock: emulator.clock, accounts, directory: getDirectory, usage })
  registerControlRoutes(emulator.app, { accounts, directory: getDirectory, seedRng: () => seedRng, usage })
  return { emulator, directory: getDirectory, accounts }
}

export async function startContactdataSandbox(
  opts: { port?: number; host?: string; stateFile?: string } = {},
): Promise<ContactdataSandbox> {
  const { emulator, directory, accounts } = createContactdataEmulator()
  // Accounts (and the credits they used) are kept; the dataset is generated the same on every start.
  if (opts.stateFile) emulator.persistTo(opts.stateFile, accounts)
  const url = await listen(emulator.app, opts.port ?? 0, opts.host)
  return {
    url,
    demo: structuredClone(DEMO),
    // Live counts, so records added through /_sandbox/seed show up.
    dataset: {
      get people() {
        return directory().people.length
      },
      get companies() {
        return directory().companies.length
      },
    },
    emulator,
    close: () => emulator.app.close(),
  }
}
