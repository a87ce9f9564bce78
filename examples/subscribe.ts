/**
 * README "Push over WebSocket": the typed client over a WebSocket connection, subscribed to new
 * blocks; prints the next block's notification (send a transaction meanwhile, e.g.
 * examples/sign-transfer.ts) and ends:
 *
 *   npx tsx examples/subscribe.ts [--url http://127.0.0.1:8081] [--blocks 1]
 */
import { createClient, stringifyJson, wsTransport } from 'keel-client'
import { exampleOptions } from './options.ts'

const options = exampleOptions(
  { blocks: { type: 'string', default: '1', description: 'how many new blocks to print before it ends' } },
  'subscribes to new blocks over WebSocket and prints each one pushed; a block comes when a transaction commits',
)
const url = options.url // http:// or ws://, the same port
let blocksLeft = Number(options.values.blocks)

const transport = await wsTransport(url, {
  onNotification: (message) => {
    console.log(stringifyJson(message))
    if (--blocksLeft === 0) void transport.close()
  },
})
const client = createClient({ transport })
const id = await client.sub_subscribe('block', true)
console.log(`subscribed: ${id}`)
// a solo node cuts a block only when a transaction arrives: say what ends the wait
console.log(
  `waiting for ${blocksLeft} new block(s): a block is written when a transaction commits, e.g. from another terminal \`npx tsx examples/sign-transfer.ts --url ${url}\` (Ctrl-C to leave)`,
)
