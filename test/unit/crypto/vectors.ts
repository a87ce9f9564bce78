/**
 * Test vectors of protocol.md §1.3 and §2 and sdk-wire.md §5, copied as published. Values the
 * design notes abbreviate (the manual's payloads and invoke signature, the JS SDK's own test
 * transaction) are filled in from their public sources, named at each entry. Never adjust a value
 * here to make a test pass: a mismatch is a finding to report.
 */
import { keccak256 } from '../../../src/crypto/hash.ts'

/** The 2017 manual's demo account (protocol.md §1.3). */
export const DEMO_ADDRESS = '0x17d806c92fa941b4b7a8ffffc58fa2f297a3bffc'
/**
 * Its private key, published in the Hyperchain repository history at FEB
 * `api/jsonrpc/Dashboard/privateKey/17d806c92fa941b4b7a8ffffc58fa2f297a3bffc.txt` (protocol.md
 * §1.3 names the file); used only to check that our signer reproduces the generated vectors.
 */
export const DEMO_PRIVATE_KEY = '2411065a721b9dab5ba8f833aa317a2723bbe7e90e41000052f2d5799384b877'

/** Full payload of the manual's contract_deployContract example (DOC docs/en/JSON-RPC_manual). */
export const MANUAL_DEPLOY_PAYLOAD =
  '0x60606040526000805463ffffffff1916815560ae908190601e90396000f3606060405260e060020a60003504633ad14af381146030578063569c5f6d14605e578063d09de08a146084575b6002565b346002576000805460e060020a60243560043563ffffffff8416010181020463ffffffff199091161790555b005b3460025760005463ffffffff166040805163ffffffff9092168252519081900360200190f35b34600257605c6000805460e060020a63ffffffff821660010181020463ffffffff1990911617905556'

/** The manual's deploy example: 65-byte r‖s‖v signature, no flag. */
export const manualDeploy = {
  tx: { from: DEMO_ADDRESS, payload: MANUAL_DEPLOY_PAYLOAD, timestamp: 1487771157166000000n, nonce: 5373500328656597 },
  signature:
    '0x388ad7cb71b1281eb5a0746fa8fe6fda006bd28571cbe69947ff0115ff8f3cd00bdf2f45748e0068e49803428999280dc69a71cc95a2305bd2abf813574bcea900',
  signString: `from=0x17d806c92fa941b4b7a8ffffc58fa2f297a3bffc&to=0x0&value=${MANUAL_DEPLOY_PAYLOAD}&timestamp=0x14a59ffc21f38780&nonce=0x13172b8a4a3ed5`,
  signHash: '0x2e6a644a4ca6a9daba4444995dc0dda039208e642df11db35438d18e7c3b13c3',
  /** the manual's result, reproduced with the Feb-2017 gasLimit 10000 */
  txHashFeb2017: '0x406f89cb205e136411fd7f5befbf8383bbfdec5f6e8bcfe50b16dcff037d1d8a',
  /** protocol.md §1.3: the same signature with the 0x00 flag */
  flaggedSignature:
    '0x00388ad7cb71b1281eb5a0746fa8fe6fda006bd28571cbe69947ff0115ff8f3cd00bdf2f45748e0068e49803428999280dc69a71cc95a2305bd2abf813574bcea900',
  /** protocol.md §2: tx hash of the flagged deploy with the 1.4 defaults */
  flaggedTxHash14: '0xd4c44415d9b7f0e0910d6325058a3d82799b028aeac17923fac061ac5223e17b',
}

/** The manual's contract_invokeContract example (payload and signature from the manual). */
export const manualInvoke = {
  tx: {
    from: DEMO_ADDRESS,
    to: '0x313bbf563991dc4c1be9d98a058a26108adfcf81',
    payload:
      '0x3ad14af300000000000000000000000000000000000000000000000000000000000000010000000000000000000000000000000000000000000000000000000000000002',
    timestamp: 1487773188814000000n,
    nonce: 5019420501875693,
  },
  signature:
    '0xde467ec4c0bd9033bdc3b6faa43a8d3c5dcf393ed9f34ec1c1310b0859a0ecba15c5be4480a9ad2aaaea8416324cb54e769856775dd5407f9fd64f0467331c9301',
  signHash: '0xc77ae09da835938f69a985b47519febf8ba2c9864a575a7cd15b3aa220d882ce',
  txHashFeb2017: '0xd7a07fbc8ea43ace5c36c14b375ea1e1bc216366b09a6a3b08ed098995c08fde',
}

/** protocol.md §1.3 generated: 2017-format transfer. */
export const generatedTransfer2017 = {
  tx: {
    from: DEMO_ADDRESS,
    to: '0x000f1a7a08ccc48e5d30f80850cf1cf283aa3abd',
    value: 100,
    timestamp: 1510000000000000000n,
    nonce: 1234567890123456,
  },
  signString:
    'from=0x17d806c92fa941b4b7a8ffffc58fa2f297a3bffc&to=0x000f1a7a08ccc48e5d30f80850cf1cf283aa3abd&value=0x64&timestamp=0x14f498ffead70000&nonce=0x462d53c8abac0',
  hash: '0xc9c3e54b41ae3c1488ce751b0dea2fa0105b961ed5ece3fee13ad48a97c3c821',
  signature:
    '0x00cf969c16c2601f296bc5bbad595b1633d0fdeff3e59d296be15755f30fc4d1024e59a330d13948d3c0431af81638466516bcd77fba6ee8b28ffb8ec2abfcfa5d01',
  /** protocol.md §2 */
  valueProto: '08904e1080c2d72f1864',
  txHash14: '0x8d47de37eb02b4776460bea54e581f31b224a60dddd0c4271dff256a042d8b9e',
}

/** protocol.md §1.3 generated: TS format B transfer, version "3.0". */
export const generatedTsFormatB = {
  tx: {
    from: DEMO_ADDRESS,
    to: '0x000f1a7a08ccc48e5d30f80850cf1cf283aa3abd',
    value: 100,
    type: 'TRANSFER',
    opcode: 0,
    version: '3.0',
    gasPrice: 0,
    gasLimit: 1000000000,
    expirationTimestamp: 1650000300000000000n,
    timestamp: 1650000000000000000n,
    nonce: 5373500328656597,
  },
  signString:
    'from=0x17d806c92fa941b4b7a8ffffc58fa2f297a3bffc&to=0x000f1a7a08ccc48e5d30f80850cf1cf283aa3abd&value=0x64&payload=0x0&timestamp=0x16e5fa4207650000&nonce=0x13172b8a4a3ed5&opcode=0&extra=&vmtype=TRANSFER&version=3.0&extraid=&cname=&price=0x0&gasLimit=0x3b9aca00&expirationTimestamp=0x16e5fa87e0c9b800&initiator=&withholding=',
  hash: '0x58af937040c6da242747379ba49f70fbf9d7a64d600d66c968986854538d2603',
  signature:
    '0x00f1e581506f9ee794ee3c30297c1aa1bb5d744202a63ee2abfcac331ce9aa6edf431f0e0bb33689ce928b4b106b9463b24424f451526250c3a07fbcd38b0e78e900',
}

/** protocol.md §1.3 generated: JV format A invoke. */
export const generatedJvFormatA = {
  tx: {
    from: DEMO_ADDRESS,
    to: '0xaeccd2fd1118334402c5de1cb014a9c192c498df',
    payload: '0xbe1c766b',
    timestamp: 1650000000000000000n,
    nonce: 2472630987523856,
  },
  signString:
    'from=0x17d806c92fa941b4b7a8ffffc58fa2f297a3bffc&to=0xaeccd2fd1118334402c5de1cb014a9c192c498df&value=0xbe1c766b&timestamp=0x16e5fa4207650000&nonce=0x8c8d843ac0710&opcode=0&extra=&vmtype=EVM',
  hash: '0x3372c11bfd614f4451e334cc950da73fb706ca01347da6fe2ff5fe1bb25cca82',
  signature:
    '0x00be3e157ed5b76df2c278003af01ea0fd4bc8b8b94b847b6c48d01d0b4e17e0975886ac6ec16976fa1d736d87b400fd71af11c0789448e7245038784d741602ae01',
}

/** protocol.md §1.3: SM2 vector with our own key. */
export const sm2Protocol = {
  privateKeySource: 'hyperchain-sm2-test-vector',
  privateKey: 'cc6f6937abdca486db414cbfa11415a2b628be8e7ef4e0476c006e5d2d53b715',
  publicKey:
    '04792d78bcdc6e2740df66de185ab597ae7ca3c5d4b47f625b6d6bf1cc72c3de979bc9b5308724168dbf78f7b4f604c0df6275c38eafc3054213a17ba37f90078d',
  address: '0x1f7d2e0369c64fc68488652b007ad8eba86634d0',
  tx: {
    from: '0x1f7d2e0369c64fc68488652b007ad8eba86634d0',
    to: '0x000f1a7a08ccc48e5d30f80850cf1cf283aa3abd',
    value: 100,
    timestamp: 1510000000000000000n,
    nonce: 1234567890123456,
  },
  signString:
    'from=0x1f7d2e0369c64fc68488652b007ad8eba86634d0&to=0x000f1a7a08ccc48e5d30f80850cf1cf283aa3abd&value=0x64&timestamp=0x14f498ffead70000&nonce=0x462d53c8abac0',
  z: '6b720e56f3e0b14a68fccf7b25eb0cce0fd96f3682fdd2d79963b42e711fbc3f',
  e: '57388a70fc68cd8e9be6e321dbd24c927fdde649bb95c95c9b1812361ec27986',
  der: '3044022030696b082f10762366b4fcb129c3fad9fa9847b1e3da4d418511cab1a0f4052f02203a9fba2086de9a7efd46bad360361ed8b073bf5cfc292049db29b477bac1617d',
}

/** sdk-wire.md §5: the JS SDK test fixture key, and the shared inputs of its worked example. */
export const SDK_PRIVATE_KEY = '53e161c6ac1bb0394a751049caab56d4dcc9c9c96fa64dcaa143b70bc35d5cf5'
export const SDK_PUBLIC_KEY =
  '048c7b77cef59439bfaa649db22a7bcf81112117923b6f0a223fd2416db64b698d0098a6621d32a673c224f4933f75981641f6e7131d9c30b1e972a875e821958a'
export const SDK_ADDRESS = '0xb336fe89769bcefc57e6f7f5bf059ee59bad96d3'
const C = '0x1212121212121212121212121212121212121212'
const sdkBase = {
  from: SDK_ADDRESS,
  timestamp: 1700000000000000000n,
  nonce: 1234567890123456,
  gasPrice: 0,
  gasLimit: 1000000000,
  expirationTimestamp: 1700000300000000000n,
  version: '4.1',
}
/** selector of insert(string,string) and ABI("k","v"), in full in sdk-wire.md §5 */
export const INSERT_PAYLOAD =
  '0x06e63ff80000000000000000000000000000000000000000000000000000000000000040000000000000000000000000000000000000000000000000000000000000008000000000000000000000000000000000000000000000000000000000000000016b0000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000017600000000000000000000000000000000000000000000000000000000000000'
/** get("k"): sdk-wire.md §5 names the call but not the bytes; this is keccak("get(string)")[:4] ‖ ABI("k") */
export const GET_PAYLOAD = `0x${Buffer.from(keccak256('get(string)').subarray(0, 4)).toString('hex')}${'20'.padStart(64, '0')}${'1'.padStart(64, '0')}${'6b'.padEnd(64, '0')}`

export interface SdkVector {
  name: string
  tx: Record<string, unknown>
  /** full signed string where the doc gives it */
  signString?: string
  hash: string
  signature: string
  /** sdk-wire.md §5 marks high-S rows; the other rows of its table are low-s; undefined = not stated */
  highS?: boolean
}

export const sdkVectors: SdkVector[] = [
  {
    name: 'transfer (worked example)',
    tx: { ...sdkBase, to: '0x3434343434343434343434343434343434343434', type: 'TRANSFER', opcode: 0, value: 100 },
    signString:
      'from=0xb336fe89769bcefc57e6f7f5bf059ee59bad96d3&to=0x3434343434343434343434343434343434343434&value=0x64&payload=0x0&timestamp=0x17979cfe362a0000&nonce=0x462d53c8abac0&opcode=0&extra=&vmtype=TRANSFER&version=4.1&extraid=&cname=&price=0x0&gasLimit=0x3b9aca00&expirationTimestamp=0x17979d440f8eb800&initiator=&withholding=',
    hash: 'e44042f2ab006f93b4b0bccb2f4b56f623a62a3ebeeb52277ee9b8c70a788ca6',
    signature:
      '00416425ac897e4b8118c566e492f633a75ff4bd3e52f8f30a81c174ae96b9edc66bcfddf6a326164c8757edca9ce2ba373ef652dec038430375dc0c51de90a0ce00',
    highS: false,
  },
  {
    name: 'invoke insert("k","v")',
    tx: { ...sdkBase, to: C, type: 'EVM', opcode: 0, payload: INSERT_PAYLOAD },
    hash: '2da828406a3200d8277c0e268c488cfbed52069a1329b74dcf4a79ee0b1cc32d',
    signature:
      '00e08ea91ada8eaae8fc37d510e30be388a4816adf6c912a72aed2a7ceb2dc99511e063450b55559e3e277c0fcaec4fc036d53d0662b37ce16445ca1ec0617b80800',
    highS: false,
  },
  {
    name: 'freeze',
    tx: { ...sdkBase, to: C, type: 'EVM', opcode: 2, value: 0 },
    hash: 'a9f4f282b3935f3cbefb6f2223c20963441dc7895f2ec49ad71cfd2afd844b16',
    signature:
      '0009dc02e5d261a360d7e7e7a11dbe906cc16a94485d14aa6888f69cecd30f32f21ab3a5b044950a5b392d08ba30b81379975aeec92b4016b032736df29073691801',
    highS: false,
  },
  {
    name: 'unfreeze',
    tx: { ...sdkBase, to: C, type: 'EVM', opcode: 3, value: 0 },
    hash: '29e340cfbb583247807832f743bfe285fa5bf7391923e5b591433de72590a990',
    signature:
      '001b43d9b9547659bed1d375d5fce98789dbba4c9ef0f18b64c69cf969cf9c7481fb2ccd70ab3267e54f7d5551566b19e22bbeda8eba7806459ea65f7d2f22fe5d00',
    highS: true,
  },
  {
    name: 'upgrade to 0x6080',
    tx: { ...sdkBase, to: C, type: 'EVM', opcode: 1, payload: '0x6080' },
    hash: '8f3ea3131b55b23a38a4cefa27c16382034175d2ba82f79f9b4c7f2a689f30be',
    signature:
      '00c39d1f91e3d553f9c8a493185095e2b752937bec75b5a337aa8ae6e1d7db5e3ad9aeeaaff6a8602f3156756029d14699575c2a5c27f6fd38fe53b4faf939882100',
    highS: true,
  },
  {
    name: 'get("k") with extra and extraIdInt64',
    tx: { ...sdkBase, to: C, type: 'EVM', opcode: 0, payload: GET_PAYLOAD, extra: 'hello', extraIdInt64: [7, 8] },
    hash: '6b28a6599672efb6a74aecc95e17b4bcb645844b47b342df32a48b5807faae97',
    signature:
      '00d8b9ac91a34e5931324333fc2da80b8d4a7da8b3153950c2e210d41efee9d2de66922d9d9b08c77f6aaccf2944655bab2dfe2f7841eec6933ecf2af842208b1b01',
    highS: false,
  },
  {
    name: 'get("k") with extraIdString (SDK extraid bug)',
    tx: { ...sdkBase, to: C, type: 'EVM', opcode: 0, payload: GET_PAYLOAD, extraIdString: ['abc'] },
    hash: 'a5b820334aed9ab81f0ca7efc7c975b86b4fd308ced390e64f8614b7a3e1625b',
    signature:
      '0078b63458feeecb24aea4bfda987c5e47a95cfb0558196971f1c5c8e2b157a5a73d75754973ae7dd8f80b359bf0d4158239121315671413e8389334fcc7d4430d00',
    highS: false,
  },
  {
    // The JS SDK's own test (tssdk test/common/transaction.spec.ts "toJson"); the JSON is there in full.
    name: 'SDK test vector (toJson, version 4.2)',
    tx: {
      from: SDK_ADDRESS,
      to: '0xd77614848d82d8ec8874f046571a04ccba7cf0d9',
      timestamp: 1674026731135000064n,
      nonce: 1870973331884563,
      type: 'EVM',
      opcode: 0,
      payload:
        '0x4ca90470000000000000000000000000000000000000000000000000000000000000007b000000000000000000000000000000000000000000000000000000000000007b000000000000000000000000000000000000000000000000000000000000007b000000000000000000000000000000000000000000000000000000000000007b000000000000000000000000000000000000000000000000000000000000007b',
      gasPrice: 0,
      gasLimit: 1000000000,
      expirationTimestamp: 1674027031135000064n,
      version: '4.2',
    },
    hash: '13be79dd5d246ee90268923c0ecbd32a499b55ef19af4c0c784b2fcde3bc7b96',
    signature:
      '003a7c648903868310c619ae2d78c433067c33db5c2c3fe3a497a873a47c22c4eeaaee9e2b31d7a627cca99e34087eee356e8a1dddf6b4da9ff803e00523a4036600',
  },
]

/** sdk-wire.md §5 deploy of setHash.bin: the doc abbreviates the payload, so only digest and signature can be checked. */
export const sdkDeployDigestOnly = {
  hash: 'f3e55252963fb6529d8bf10f2430915c04c79aecc2511d63c2f47d38e7329904',
  signature:
    '007f7cfd3d384bde215a813d77521c08a31485b6aba527a5ed7c54dc4f9f32137e46f03a84d2665a78b3925f452d9031aade197b560f871b865d34b668f3f6554700',
}

/**
 * Not in the design notes: the JS SDK's other own test ("fromJson", same file), which sends no
 * expirationTimestamp, so the SDK's default (timestamp + 300 s) is signed.
 */
export const sdkFromJsonVector = {
  tx: {
    from: SDK_ADDRESS,
    to: '0xd77614848d82d8ec8874f046571a04ccba7cf0d9',
    timestamp: 1675219768574000000n,
    nonce: 1870973331884563,
    type: 'EVM',
    opcode: 0,
    payload:
      '0x4ca90470000000000000000000000000000000000000000000000000000000000000007b000000000000000000000000000000000000000000000000000000000000007b000000000000000000000000000000000000000000000000000000000000007b000000000000000000000000000000000000000000000000000000000000007b000000000000000000000000000000000000000000000000000000000000007b',
    gasPrice: 0,
    gasLimit: 1000000000,
    version: '4.2',
  },
  signature:
    '00013f2cc0de5863e72c5e23302811b1b39a1bfcd5ee9ef6870a8461960b7faf94ac84c3ad64e0524c2d8845600db6c9507a548e46800beaded16d7c0f802285d900',
}

/** sdk-wire.md §5 SM2 example (SDK example fixture key). */
export const sm2Sdk = {
  privateKey: '2806197d247c5208c49528b46fdfa31c7e1457109f4e984f89e01bb6ed18dc4f',
  publicKey:
    '045906bf3063dced2488e04cda8227321428b8ef22a07dbe026ed77cbd100594a2fcddd4fda5a98597dd61eb69fbd08ced97a4ef80159c900a5fb845478327aacf',
  address: '0x6275b09dbb9d49252150e52647101665f8f60ca4',
  z: '32fe920d1c41121dee03e37e6c84dca63f077e1064d73a5733351b3710b89c3d',
  eAbc: '330f72cda681847f1e2ba87ca54aca6233f357b24a7c0effeec41c81b04aafe3',
  derAbc:
    '3046022100e0c3d150acdfd04ba0b69f43a8ed223b45401a829d0f59947531d5b6869a87a00221009c3c46924ad2354ab36be4fc92211024412db26a10fa4b6d9bb1ef4ad4f77ba7',
  /** "a full SM2-signed invoke has the digest …" (no signature or string given) */
  invokeDigest: '434b6aaf0d6039bd1be1975ee32abe80989ef5ab2b5b7523fd31ae1ffcd30250',
}
