// Where the sandboxes listen when pinned: `PATCHBAY_SANDBOX_PORTS` for `npm start`'s embedded ones
// (checked with the other settings in src/config.ts) and for `npm run sandbox`. Imports nothing.

export const SANDBOX_NAMES = ['taskboard', 'codehost', 'contactdata'] as const
export type SandboxName = (typeof SANDBOX_NAMES)[number]
export type PinnedPorts = Record<SandboxName, number>

/**
 * `4101` (one base port: the task-board on it, the code host on the next, contact-data on the one
 * after) or `4101,4102,4103` (task-board, code-host, contact-data). Throws an Error saying what is
 * wrong.
 */
export function parseSandboxPorts(value: string): PinnedPorts {
  const parts = value.split(',').map((p) => p.trim())
  if (!parts.every((p) => /^\d+$/.test(p))) throw new Error('not whole numbers')
  const numbers = parts.map(Number)
  let ports: number[]
  if (numbers.length === 1) {
    const base = numbers[0]!
    if (base < 1 || base > 65533)
      throw new Error('a base port goes from 1 to 65533, with the next two free too')
    ports = [base, base + 1, base + 2]
  } else if (numbers.length === 3) {
    if (numbers.some((n) => n < 1 || n > 65535)) throw new Error('a port goes from 1 to 65535')
    if (new Set(numbers).size !== 3) throw new Error('three different ports')
    ports = numbers
  } else throw new Error(`${numbers.length} ports given, one base port or three`)
  return { taskboard: ports[0]!, codehost: ports[1]!, contactdata: ports[2]! }
}
