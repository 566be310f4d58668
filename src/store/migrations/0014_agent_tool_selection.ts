// An agent's tool selection (JSON, nullable): the steps, connectors and tools it lists over MCP and
// function calling, and whether it lists them through the discovery tools. Null: every step of its
// connections and all its tools, as before.
import type { Kysely } from 'kysely'

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('agents').addColumn('tool_selection', 'text').execute()
}
