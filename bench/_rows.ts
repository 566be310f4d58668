// Rows the store benchmarks write with the store's own functions.
import type { NewEvent } from '../src/store/event-log.ts'
import { newId } from '../src/store/ids.ts'
import { objectId } from './_stats.ts'

/** A new card on a workspace's board, as its webhook's event is stored (received `at`). */
export function cardCreated(workspaceId: string, at: string): NewEvent {
  return {
    id: newId('evt'),
    workspace_id: workspaceId,
    connector: 'taskboard',
    subscription_id: `sub_${workspaceId}`,
    connection_id: `con_${workspaceId}`,
    model: 'card',
    upstream_id: objectId(),
    type: 'card.created',
    refs: '{"boardId":"b1","listId":"l1","cardId":"c1"}',
    data: JSON.stringify({ card: { id: 'c1', name: 'A card made by the benchmark', idList: 'l1' } }),
    occurred_at: at,
    received_at: at,
    matched: 1,
    owner: '',
  }
}
