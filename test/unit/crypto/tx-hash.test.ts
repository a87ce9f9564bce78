import { bytesToHex, hexToBytes } from '@noble/hashes/utils.js'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { keccak256, nodeHash } from '../../../src/crypto/hash.ts'
import {
  blockHash,
  contractAddress,
  DEFAULT_GAS_LIMIT,
  DEFAULT_GAS_PRICE,
  encodeConsensusReceipt,
  encodeConsensusTransaction,
  encodeTransactionValue,
  FEB_2017_GAS_LIMIT,
  goJson,
  hashTransaction,
  listRoot,
  transactionHash,
  transactionValueOf,
  validationResultHash,
} from '../../../src/crypto/tx-hash.ts'
import { DEMO_ADDRESS, generatedTransfer2017, manualDeploy, manualInvoke } from './vectors.ts'

test('protocol §2: the manual deploy tx hash, with the Feb-2017 gasLimit 10000', () => {
  const tx = { ...manualDeploy.tx, signature: manualDeploy.signature }
  assert.is(transactionHash(tx, 'contract', { gasLimit: FEB_2017_GAS_LIMIT }), manualDeploy.txHashFeb2017)
  // with the 1.4 default it differs: the manual predates the change
  assert.is.not(transactionHash(tx, 'contract'), manualDeploy.txHashFeb2017)
})

test('protocol §2: the manual invoke tx hash, with the Feb-2017 gasLimit 10000', () => {
  assert.is(
    transactionHash({ ...manualInvoke.tx, signature: manualInvoke.signature }, 'contract', { gasLimit: FEB_2017_GAS_LIMIT }),
    manualInvoke.txHashFeb2017,
  )
})

test('protocol §2: generated 1.4 transfer: TransactionValue protobuf and tx hash', () => {
  const value = encodeTransactionValue(transactionValueOf(generatedTransfer2017.tx, 'transfer'))
  assert.is(bytesToHex(value), generatedTransfer2017.valueProto)
  assert.is(
    transactionHash({ ...generatedTransfer2017.tx, signature: generatedTransfer2017.signature }, 'transfer'),
    generatedTransfer2017.txHash14,
  )
})

test('protocol §2: generated 1.4 deploy with the flagged signature', () => {
  assert.is(transactionHash({ ...manualDeploy.tx, signature: manualDeploy.flaggedSignature }, 'contract'), manualDeploy.flaggedTxHash14)
})

test('tx hash: Go JSON shape, null To for a deployment, signature hashed as sent (0x optional)', () => {
  const hashed = {
    from: hexToBytes(DEMO_ADDRESS.slice(2)),
    to: null,
    value: encodeTransactionValue({ price: DEFAULT_GAS_PRICE, gasLimit: DEFAULT_GAS_LIMIT, amount: 0n }),
    timestamp: 1487771157166000000n,
    nonce: 5373500328656597n,
    signature: hexToBytes('00aa'),
  }
  // protocol.md §2's example shape: ["F9gGyS+pQbS3qP//xY+i8pejv/w=",null,"CJBO…",1487771157166000000,5373500328656597,"…"]
  assert.is(
    goJson([hashed.from, hashed.to, hashed.value, hashed.timestamp, hashed.nonce, hashed.signature]),
    '["F9gGyS+pQbS3qP//xY+i8pejv/w=",null,"CJBOEIDC1y8=",1487771157166000000,5373500328656597,"AKo="]',
  )
  const withPrefix = transactionHash({ ...manualDeploy.tx, signature: manualDeploy.flaggedSignature }, 'contract')
  assert.is(transactionHash({ ...manualDeploy.tx, signature: manualDeploy.flaggedSignature.slice(2) }, 'contract'), withPrefix)
  assert.is(
    bytesToHex(hashTransaction(hashed)),
    bytesToHex(keccak256(goJson([hashed.from, null, hashed.value, hashed.timestamp, hashed.nonce, hashed.signature]))),
  )
})

test('TransactionValue: field order, omitted zeros, op/extra/vmType, negative int64', () => {
  assert.is(bytesToHex(encodeTransactionValue({ price: 0n, gasLimit: 0n, amount: 0n })), '')
  assert.is(
    bytesToHex(
      encodeTransactionValue({ price: 1n, gasLimit: 2n, amount: 3n, payload: hexToBytes('abcd'), op: 100, extra: 'hi', vmType: 1 }),
    ),
    '0801100218032202abcd40644a0268695001',
  )
  assert.is(bytesToHex(encodeTransactionValue({ price: 0n, gasLimit: 0n, amount: -1n })), `18${'ff'.repeat(9)}01`)
  // transfer ignores payload/opcode/type; contract keeps them; "jvm" in any case is JVM
  const tx = { from: DEMO_ADDRESS, timestamp: 1, nonce: 1, payload: '0xab', opcode: 2, type: 'Jvm', extra: 'x', value: 5 }
  assert.equal(transactionValueOf(tx, 'transfer'), { price: 10000n, gasLimit: 100000000n, amount: 5n, extra: 'x' })
  assert.equal(transactionValueOf(tx, 'contract'), {
    price: 10000n,
    gasLimit: 100000000n,
    amount: 5n,
    extra: 'x',
    payload: hexToBytes('ab'),
    op: 2n,
    vmType: 1,
  })
  assert.is(transactionValueOf({ ...tx, type: 'HVM' }, 'contract').vmType, 0)
})

test('protocol §2: contract addresses of the manual (demo account, nonce 0 and 1)', () => {
  assert.is(contractAddress(DEMO_ADDRESS, 0), '0xaeccd2fd1118334402c5de1cb014a9c192c498df')
  assert.is(contractAddress(DEMO_ADDRESS, 1n), '0x313bbf563991dc4c1be9d98a058a26108adfcf81')
})

test('contract address agrees with Ethereum for large nonces (RLP integer encoding)', () => {
  // Ethereum's CREATE address of 0x6ac7ea33f8831ea9dcc53393aaa88b25a785dbf0 at nonces 0..3 (widely published)
  const sender = '0x6ac7ea33f8831ea9dcc53393aaa88b25a785dbf0'
  assert.is(contractAddress(sender, 0), '0xcd234a471b72ba2f1ccf0a70fcaba648a5eecd8d')
  assert.is(contractAddress(sender, 1), '0x343c43a37d37dff08ae8c4a11544c718abb4fcf8')
  assert.is(contractAddress(sender, 2), '0xf778b86fa74e846c4f0a1fbd1335fe81c00a0c91')
  assert.is(contractAddress(sender, 3), '0xfffd933a0bc612844eaf0c6fe3e5b8e9b6c1d19c')
  assert.throws(() => contractAddress(sender, -1), /negative/)
  assert.is(contractAddress(sender, 0x80).length, 42)
  assert.is(contractAddress(sender, 2n ** 64n - 1n).length, 42)
})

test('protocol §2: node hashes of node1/node5 in namespace global (prefix and suffix as published)', () => {
  const node1 = nodeHash('node1', 'global')
  const node5 = nodeHash('node5', 'global')
  assert.ok(node1.startsWith('fa34664e') && node1.endsWith('663a'), node1)
  assert.ok(node5.startsWith('55d3c05f') && node5.endsWith('03bc'), node5)
  assert.match(node1, /^[0-9a-f]{64}$/)
})

test('block hash: Keccak of Go JSON [ParentHash, Number, Timestamp, TxRoot, ReceiptRoot, MerkleRoot]', () => {
  const block = {
    parentHash: new Uint8Array(32),
    number: 1n,
    timestamp: 1487771157166000000n,
    txRoot: keccak256('a'),
    receiptRoot: keccak256('b'),
    merkleRoot: keccak256('c'),
  }
  const json = `["${'A'.repeat(43)}=",1,1487771157166000000,"${Buffer.from(block.txRoot).toString('base64')}","${Buffer.from(block.receiptRoot).toString('base64')}","${Buffer.from(block.merkleRoot).toString('base64')}"]`
  assert.is(bytesToHex(blockHash(block)), bytesToHex(keccak256(json)))
  assert.is(bytesToHex(blockHash({ ...block, parentHash: null })), bytesToHex(keccak256(json.replace(`"${'A'.repeat(43)}="`, 'null'))))
})

test('roots: consensus encodings, an empty block hashes Go\'s nil slice "null"', () => {
  const value = encodeTransactionValue({ price: 10000n, gasLimit: 100000000n, amount: 100n })
  const encoded = encodeConsensusTransaction({ from: hexToBytes('01'.repeat(20)), to: null, value, timestamp: 5n, nonce: 6n })
  assert.is(bytesToHex(encoded), `0a14${'01'.repeat(20)}1a0a${bytesToHex(value)}20052806`)
  assert.is(bytesToHex(encodeConsensusReceipt({ gasUsed: 0n, ret: hexToBytes('ab'), logs: new Uint8Array(0) })), '1201ab')
  assert.is(bytesToHex(listRoot([])), bytesToHex(keccak256('null')))
  assert.is(bytesToHex(listRoot([encoded])), bytesToHex(keccak256(`["${Buffer.from(encoded).toString('base64')}"]`)))
  const r = keccak256('r')
  assert.is(bytesToHex(validationResultHash(r, r, r)), bytesToHex(keccak256(goJson([r, r, r]))))
})

test.run()
