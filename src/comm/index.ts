/** Transports: one interface, in-process and TCP implementations, batching and request/response. */
export { BatchedSend, type BatchedSendOptions, DEFAULT_BATCH_INTERVAL_MS } from "./batchedSend.ts";
export { ClonedValue } from "./clonedValue.ts";
export {
  type Comm,
  type CommCloseInfo,
  type CommOptions,
  type ConnectionHandler,
  type ConnectOptions,
  commOptionsOf,
  DEFAULT_CONNECT_TIMEOUT_MS,
  DEFAULT_MAX_FRAME_BYTES,
  DEFAULT_MAX_MESSAGE_BYTES,
  type FrameLimits,
  frameLimitsOf,
  type Listener,
  type ListenOptions,
  type TcpTimeouts,
} from "./comm.ts";
export { connect, listen, SCHEMES } from "./connect.ts";
export {
  CommAbortedError,
  CommClosedError,
  CommError,
  ConnectError,
  FrameTooLargeError,
  isDataError,
  isNetworkError,
  isTransientConnectError,
  MessageTooLargeError,
  SerializationError,
} from "./errors.ts";
export { forEachMessage } from "./forEachMessage.ts";
export { ForwardedBuffer, ForwardedBytes, ForwardedClonedValue } from "./forwardedBytes.ts";
export { DEFAULT_INPROC_NAME } from "./inproc.ts";
export type { PeerLimit } from "./peerLimit.ts";
export {
  type CommLogger,
  RemoteError,
  type RpcCallOptions,
  RpcClient,
  type RpcContext,
  type RpcHandler,
  rpc,
  serveRpc,
} from "./rpc.ts";
export { type TcpScheme, tcpAddress } from "./tcp.ts";
export {
  loadTlsCredentials,
  type TlsCredentials,
  type TlsFiles,
  tlsCredentialsProblem,
} from "./tls.ts";
export { UnreadableValueError } from "./unreadableValue.ts";
export {
  type DecodeOptions,
  decodeMessage,
  type EncodedMessage,
  encodeMessage,
  MAP_EXTENSION_TYPE,
  type OutOfBandBuffer,
} from "./wireCodec.ts";
