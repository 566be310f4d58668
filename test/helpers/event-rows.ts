// Rows for store tests of the event log.
import type { NewDelivery, NewEvent } from '../../src/store/event-log.ts'

/**
 * A delivery of `e` waiting to be pulled from a stream, made when the event was received. Its
 * trigger id should not be a trg_ id unless that trigger exists: on PostgreSQL deliveries of trg_
 * triggers are kept only while the trigger does.
 */
export const pendingDelivery = (
  e: NewEvent,
  names: Pick<NewDelivery, 'id' | 'agent_id' | 'trigger_id'>,
): NewDelivery => ({
  ...names,
  workspace_id: e.workspace_id,
  event_id: e.id,
  target: { type: 'stream' },
  status: 'pending',
  attempts: 0,
  next_attempt_at: null,
  last_status: null,
  last_error: null,
  tool_run_id: null,
  created_at: e.received_at,
  delivered_at: null,
  claimed_until: null,
})
