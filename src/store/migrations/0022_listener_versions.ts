// A webhook's listeners carry a version (issue 29, read in issue 22's tenancy mode). Where instances
// share PostgreSQL, each group commit of webhook deliveries checks, in the statement that stores
// them, that the listeners they were matched with are still those in the store
// (events.insertWithDeliveries). That check read every trigger of each webhook in the group and
// hashed their sorted ids: with 1,000 workspaces a group holds as many webhooks as deliveries, so
// ten trigger rows read, sorted and hashed per delivery (the group commit touched 40 buffers a
// delivery against 27 for one workspace). Now the webhook's row says it: `listeners_version` grows
// with every trigger added to it, removed from it, paused or resumed, in the transaction that makes
// the change (a row trigger on `triggers`), so the check reads one row a webhook. The engine reads
// the version with the listeners, in one statement (Triggers.forSubscription).
//
// The version moves for any change of the webhook's triggers, whatever their trigger key: the
// engine's listeners leave out keys it does not know and paused triggers, so the version may move
// where they did not (a needless second look), never stay where they changed.
//
// PostgreSQL only: the check runs only where instances share the store. SQLite has the column,
// always 0, to keep one schema.
import { type Kysely, PostgresAdapter, sql } from 'kysely'

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('subscriptions')
    .addColumn('listeners_version', 'integer', (c) => c.notNull().defaultTo(0))
    .execute()
  if (!(db.getExecutor().adapter instanceof PostgresAdapter)) return
  // `SET search_path FROM CURRENT`: the function finds `subscriptions` in the schema it was made in,
  // whatever the session that fires it (tests give each store a schema of its own).
  await sql`
    CREATE FUNCTION listeners_changed() RETURNS trigger LANGUAGE plpgsql
    SET search_path FROM CURRENT AS $$
    BEGIN
      IF TG_OP <> 'INSERT' AND OLD.subscription_id IS NOT NULL THEN
        UPDATE subscriptions SET listeners_version = listeners_version + 1 WHERE id = OLD.subscription_id;
      END IF;
      IF TG_OP <> 'DELETE' AND NEW.subscription_id IS NOT NULL
        AND (TG_OP = 'INSERT' OR NEW.subscription_id IS DISTINCT FROM OLD.subscription_id) THEN
        UPDATE subscriptions SET listeners_version = listeners_version + 1 WHERE id = NEW.subscription_id;
      END IF;
      RETURN NULL;
    END $$`.execute(db)
  await sql`
    CREATE TRIGGER triggers_listeners_changed
    AFTER INSERT OR DELETE OR UPDATE OF subscription_id, paused_at, trigger_key ON triggers
    FOR EACH ROW EXECUTE FUNCTION listeners_changed()`.execute(db)
}
