//! JSON-RPC 2.0 envelopes of `/mcp` answers: results, errors, and the
//! marker that tells the flood guard an answer belongs to a request id.

use rmcp::model::{ErrorCode, ErrorData, JsonRpcResponse, JsonRpcVersion2_0, RequestId};
use serde_json::Value;
use warp::http::StatusCode;
use warp::reply::Response;

use super::responses::json as json_response;

/// JSON-RPC error code of a `tools/call` over quota (HTTP 429).
pub const RATE_LIMITED: i32 = -32029;
/// JSON-RPC error code when the quota store cannot answer (HTTP 503).
pub const RATE_LIMIT_UNAVAILABLE: i32 = -32030;

/// Marks an answer of `/mcp`: its flood-guard 429 is a JSON-RPC error for this request id.
#[derive(Clone, Debug)]
pub(crate) struct RpcAnswer(pub Option<RequestId>);

/// A JSON-RPC error response as JSON-RPC 2.0 (section 5) writes it: `id`
/// is always there, `null` when the request's id is not known (a refused
/// origin, a body too large or not JSON). rmcp's own `JsonRpcError` leaves
/// it out then, which clients that follow JSON-RPC 2.0 (the official MCP
/// Python SDK) do not read as an error reply: they showed "Server returned
/// an error response" instead of the message.
#[derive(serde::Serialize)]
struct ErrorReply {
    jsonrpc: JsonRpcVersion2_0,
    id: Option<RequestId>,
    error: ErrorData,
}

/// A JSON-RPC error response with `status`; every error of `/mcp` is made here.
pub(crate) fn rpc_error(
    status: StatusCode,
    id: Option<RequestId>,
    code: i32,
    message: String,
    data: Option<Value>,
) -> Response {
    let marker = RpcAnswer(id.clone());
    let body = ErrorReply {
        jsonrpc: JsonRpcVersion2_0,
        id,
        error: ErrorData::new(ErrorCode(code), message, data),
    };
    let mut response = json_response(status, serde_json::to_vec(&body).expect("errors serialise"));
    response.extensions_mut().insert(marker);
    response
}

/// A JSON-RPC result.
pub(crate) fn rpc_result(id: RequestId, result: impl serde::Serialize) -> Response {
    let marker = RpcAnswer(Some(id.clone()));
    let body = JsonRpcResponse {
        jsonrpc: JsonRpcVersion2_0,
        id,
        result: serde_json::to_value(result).expect("results serialise"),
    };
    let mut response = json_response(
        StatusCode::OK,
        serde_json::to_vec(&body).expect("responses serialise"),
    );
    response.extensions_mut().insert(marker);
    response
}
