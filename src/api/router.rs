//! The router: for every request, one lookup in the route table
//! ([`super::routes`]), the handler of the route it finds, wrapped by the
//! admission of the route's class, the panic guard and the flood guard;
//! the site's pages, 404, 405 and the CORS preflight around them.
//!
//! Each handler is given only the part of the server's state it uses
//! ([`Api`]), as warp's `todos` example hands its database.

use std::convert::Infallible;
use std::future::Future;
use std::path::PathBuf;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use bytes::Bytes;
use warp::http::Method;
use warp::reply::Response;

use super::admission::{admit, flood_guarded, Answer, Quota};
use super::clients::ClientKeys;
use super::errors::{answer_panics_async as guard, ApiError};
use super::handlers::{self, Data};
use super::jsonrpc::RpcAnswer;
use super::request::Head;
use super::routes::{self, Endpoint, Methods, Route, RouteLabel, OTHER_LABEL, SITE_LABEL};
use super::site::{Site, SitePath};
use super::stream::Streams;
use super::transport::TargetForm;

/// The parts of the public listener's state, each handed only to the
/// handlers that use it.
#[derive(Clone, Debug)]
pub struct Api {
    /// The served view, the clock, the quota: every data route's.
    pub data: Arc<Data>,
    /// How a request's client key is found; a reload swaps in new rules,
    /// which connections accepted from then on use.
    pub keys: Arc<arc_swap::ArcSwap<ClientKeys>>,
    /// The status page, the record pages, the badge, and the bases the
    /// pages and feeds link with.
    pub site: Arc<Site>,
    /// The record stream's places and closing signal.
    pub streams: Arc<Streams>,
    /// Origins allowed to call `/mcp` (requests with any other `Origin` are refused).
    pub mcp_allowed_origins: Arc<Vec<String>>,
    /// The data dir (`/healthz?ready=fresh` reads its sync state).
    pub data_dir: Arc<PathBuf>,
}

/// The service the transport calls for every request (cloned per
/// connection: one reference count).
#[derive(Clone, Debug)]
pub struct Router {
    api: Arc<Api>,
}

/// The router of `api`'s routes.
pub fn routes(api: &Api) -> Router {
    Router {
        api: Arc::new(api.clone()),
    }
}

/// The REST 500 of a handler that panicked.
fn internal() -> Response {
    ApiError::Internal.response()
}

impl Router {
    /// The answer to `request`, marked with its route's metrics label.
    /// Every answer the quota did not decide passes the flood guard,
    /// whichever route made it.
    pub async fn answer<B: http_body::Body<Data = Bytes>>(
        &self,
        request: warp::http::Request<B>,
    ) -> Response {
        let (parts, body) = request.into_parts();
        let head = Head::of(parts, &self.api.keys.load());
        // The quota in force when the request came: it admits the request
        // and guards the answer, even if a reload swaps it meanwhile.
        let quota = self.api.data.quota();
        let (label, response) = self.dispatch(&head, body, &quota).await;
        let mut response = flood_guarded(&quota, head.client(), response);
        response.extensions_mut().insert(RouteLabel(label));
        response
    }

    /// The label and answer of a request: targets that are not a path
    /// first (before any path is read), then the table (one exact lookup),
    /// then the site's pages (their parser knows them).
    async fn dispatch<B: http_body::Body<Data = Bytes>>(
        &self,
        head: &Head,
        body: B,
        quota: &Quota,
    ) -> (&'static str, Response) {
        let method = head.method();
        if method == Method::CONNECT {
            // Its authority-form target has no path to route by.
            let refused = ApiError::MethodNotAllowed(Methods::Read.allow());
            return (OTHER_LABEL, refused.response());
        }
        if let Some(form) = head.extensions().get::<TargetForm>() {
            let response = match (form, method) {
                // `OPTIONS *` asks about the server as a whole.
                (TargetForm::Asterisk, &Method::OPTIONS) => {
                    handlers::preflight(Methods::Read.allow(), None)
                }
                (TargetForm::BadHost, _) => ApiError::BadHost.response(),
                _ => ApiError::BadTarget.response(),
            };
            return (OTHER_LABEL, response);
        }
        let path = head.path();
        let Some(route) = routes::find(path) else {
            // No page path is one of the table's: the pages are asked after it.
            let page = self.api.site.pages.then(|| SitePath::parse(path)).flatten();
            let Some(page) = page else {
                return (OTHER_LABEL, ApiError::NotFound.response());
            };
            let Ok(response) = guard(internal, async { self.page(head, page) }).await;
            return (SITE_LABEL, response);
        };
        let mut response = if route.methods.answers(method) {
            self.route(route, head, body, quota).await
        } else if method == Method::OPTIONS {
            let asked = head.header("access-control-request-headers");
            handlers::preflight(route.methods.allow(), asked)
        } else {
            ApiError::MethodNotAllowed(route.methods.allow()).response()
        };
        if route.methods == Methods::Rpc && response.extensions().get::<RpcAnswer>().is_none() {
            // A refusal on `/mcp` is JSON-RPC's business (the flood guard's 429).
            response.extensions_mut().insert(RpcAnswer(None));
        }
        (route.label, response)
    }

    /// A site page.
    fn page(&self, head: &Head, page: SitePath) -> Response {
        super::site::answer(
            &self.api.data,
            &self.api.site,
            page,
            head.method(),
            head.query(),
            head.header("accept-language"),
            head.conditionals(),
        )
    }

    /// A method `route` answers: its handler, admitted by its class, under
    /// the panic guard.
    async fn route<B: http_body::Body<Data = Bytes>>(
        &self,
        route: &'static Route,
        head: &Head,
        body: B,
        quota: &Quota,
    ) -> Response {
        let Api {
            data,
            site,
            streams,
            data_dir,
            ..
        } = &*self.api;
        let request = head.data_request();
        let answer = async {
            let answer = match route.endpoint {
                Endpoint::Latest => handlers::latest(&request, data),
                Endpoint::Records => handlers::list(&request, data).await,
                Endpoint::Atom => super::feeds::atom(&request, head.host(), data, site),
                Endpoint::Ics => super::feeds::ics(&request, data, site),
                Endpoint::Stream => super::stream::stream(
                    head.query(),
                    head.header("last-event-id").map(str::to_owned),
                    head.client(),
                    data,
                    streams,
                ),
                Endpoint::OpenApi => Answer::Uncounted(handlers::openapi(head.conditionals())),
                Endpoint::Docs(lang) => {
                    let negotiated = lang.is_none();
                    let lang = lang.unwrap_or_else(|| {
                        crate::site::i18n::Lang::negotiate(head.header("accept-language"))
                    });
                    Answer::Uncounted(handlers::docs(head.conditionals(), lang, negotiated))
                }
                Endpoint::Skill => Answer::Uncounted(handlers::skill(head.conditionals())),
                Endpoint::Badge => {
                    Answer::Uncounted(super::site::badge(data, site, head.conditionals()))
                }
                Endpoint::StatusFeed => {
                    Answer::Uncounted(handlers::status_feed(head.conditionals(), data))
                }
                Endpoint::Healthz => {
                    Answer::Uncounted(handlers::healthz(head.query(), data, data_dir))
                }
                // Its own panic guard: a 500 in JSON-RPC's shape.
                Endpoint::Mcp => return self.mcp(route, head, body, quota).await,
            };
            admit(quota, route.class, &request, answer).await
        };
        let Ok(response) = guard(internal, answer).await;
        response
    }

    /// `POST /mcp` with a body of at most 64 KiB, with or without a
    /// Content-Length (chunked HTTP/1.1, HTTP/2).
    async fn mcp<B: http_body::Body<Data = Bytes>>(
        &self,
        route: &'static Route,
        head: &Head,
        body: B,
        quota: &Quota,
    ) -> Response {
        let body = match super::mcp::read_body(head.header("content-length"), body).await {
            Ok(body) => body,
            Err(too_large) => return too_large,
        };
        let data = &self.api.data;
        let request = head.data_request();
        let answer = async {
            let answer = super::mcp::handle(
                data,
                &self.api.mcp_allowed_origins,
                head.headers_all("origin"),
                head.header("mcp-protocol-version"),
                &body,
            );
            admit(quota, route.class, &request, answer).await
        };
        let Ok(response) = guard(|| super::mcp::internal_error(&body), answer).await;
        response
    }
}

impl<B> tower_service::Service<warp::http::Request<B>> for Router
where
    B: http_body::Body<Data = Bytes> + Send + 'static,
{
    type Response = Response;
    type Error = Infallible;
    type Future = Pin<Box<dyn Future<Output = Result<Response, Infallible>> + Send>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: warp::http::Request<B>) -> Self::Future {
        let router = self.clone();
        Box::pin(async move { Ok(router.answer(request).await) })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The table is asked before the pages: no page path may be one of its.
    #[test]
    fn no_route_of_the_table_is_a_page_path() {
        for route in routes::ROUTES {
            assert!(SitePath::parse(route.path).is_none(), "{}", route.path);
        }
    }
}
