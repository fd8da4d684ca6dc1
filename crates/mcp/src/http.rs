//! Serving the client over streamable HTTP.
//!
//! rmcp's HTTP server takes a `ServerHandler` (its per-method trait), not the message-level
//! service the stdio side uses, so [`HttpHandler`] maps each method back to the request it
//! came from and hands it to the same route. Results then pass through rmcp's typed model:
//! members of the MCP schema rmcp knows are kept, others are dropped (over stdio the raw JSON
//! passes). Methods the handler does not map (the 2026 draft's tasks, skills and discovery)
//! answer "method not found", rmcp's default.

// Logging (`logging/setLevel`) is deprecated in the 2026 draft, but servers still speak it.
#![allow(deprecated)]

use std::borrow::Cow;
use std::net::SocketAddr;
use std::sync::Arc;

use rmcp::handler::server::ServerHandler;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CancelledNotification, CancelledNotificationParam,
    ClientNotification, ClientRequest, CompleteRequestParams, CompleteResult, CustomNotification,
    CustomRequest, CustomResult, ErrorData, GetMeta, GetPromptRequestParams, GetPromptResponse,
    InitializeRequestParams, InitializeResult, InitializedNotification, ListPromptsResult,
    ListResourceTemplatesResult, ListResourcesResult, ListToolsResult, PaginatedRequestParams,
    PingRequest, ProgressNotification, ProgressNotificationParam, ProtocolVersion,
    ReadResourceRequestParams, ReadResourceResponse, Request, RequestOptionalParam,
    RootsListChangedNotification, ServerResult, SetLevelRequestParams, SubscribeRequestParams,
    UnsubscribeRequestParams,
};
use rmcp::service::{NotificationContext, RequestContext, RoleServer};
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::route::{Call, Route};

/// The server side of one HTTP session, handing every method to its route.
pub(crate) struct HttpHandler<R>(pub(crate) Arc<R>);

impl<R: Route> HttpHandler<R> {
    async fn forward(
        &self,
        mut request: ClientRequest,
        context: RequestContext<RoleServer>,
    ) -> Result<ServerResult, ErrorData> {
        let call = Call::new(&mut request, context);
        self.0.request(request, call).await
    }

    async fn raw(
        &self,
        request: ClientRequest,
        context: RequestContext<RoleServer>,
    ) -> Result<Value, ErrorData> {
        match self.forward(request, context).await? {
            ServerResult::CustomResult(CustomResult(value)) => Ok(value),
            other => serde_json::to_value(other)
                .map_err(|e| ErrorData::internal_error(e.to_string(), None)),
        }
    }

    async fn typed<T: DeserializeOwned>(
        &self,
        request: ClientRequest,
        context: RequestContext<RoleServer>,
    ) -> Result<T, ErrorData> {
        let value = self.raw(request, context).await?;
        serde_json::from_value(value).map_err(|e| {
            ErrorData::internal_error(
                format!("the upstream's result does not fit the MCP schema: {e}"),
                None,
            )
        })
    }

    async fn notify(
        &self,
        mut notification: ClientNotification,
        context: NotificationContext<RoleServer>,
    ) {
        if !context.meta.is_empty() {
            *notification.get_meta_mut() = context.meta;
        }
        self.0.notification(notification, context.peer).await;
    }
}

fn optional<M: Default, P: Default>(params: Option<P>) -> RequestOptionalParam<M, P> {
    match params {
        Some(params) => RequestOptionalParam::with_param(params),
        None => RequestOptionalParam::default(),
    }
}

impl<R: Route> ServerHandler for HttpHandler<R> {
    async fn initialize(
        &self,
        request: InitializeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<InitializeResult, ErrorData> {
        context.peer.set_peer_info(request.clone());
        match self
            .forward(
                ClientRequest::InitializeRequest(Request::new(request)),
                context,
            )
            .await?
        {
            ServerResult::InitializeResult(result) => Ok(result),
            _ => Err(ErrorData::internal_error(
                "the upstream did not answer initialize with an initialize result",
                None,
            )),
        }
    }

    async fn ping(&self, context: RequestContext<RoleServer>) -> Result<(), ErrorData> {
        self.raw(ClientRequest::PingRequest(PingRequest::default()), context)
            .await
            .map(drop)
    }

    async fn complete(
        &self,
        request: CompleteRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, ErrorData> {
        self.typed(
            ClientRequest::CompleteRequest(Request::new(request)),
            context,
        )
        .await
    }

    async fn set_level(
        &self,
        request: SetLevelRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.raw(
            ClientRequest::SetLevelRequest(Request::new(request)),
            context,
        )
        .await
        .map(drop)
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        self.typed::<rmcp::model::GetPromptResult>(
            ClientRequest::GetPromptRequest(Request::new(request)),
            context,
        )
        .await
        .map(Into::into)
    }

    async fn list_prompts(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        self.typed(
            ClientRequest::ListPromptsRequest(optional(request)),
            context,
        )
        .await
    }

    async fn list_resources(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        self.typed(
            ClientRequest::ListResourcesRequest(optional(request)),
            context,
        )
        .await
    }

    async fn list_resource_templates(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        self.typed(
            ClientRequest::ListResourceTemplatesRequest(optional(request)),
            context,
        )
        .await
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        self.typed::<rmcp::model::ReadResourceResult>(
            ClientRequest::ReadResourceRequest(Request::new(request)),
            context,
        )
        .await
        .map(Into::into)
    }

    async fn subscribe(
        &self,
        request: SubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.raw(
            ClientRequest::SubscribeRequest(Request::new(request)),
            context,
        )
        .await
        .map(drop)
    }

    async fn unsubscribe(
        &self,
        request: UnsubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.raw(
            ClientRequest::UnsubscribeRequest(Request::new(request)),
            context,
        )
        .await
        .map(drop)
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        self.typed::<rmcp::model::CallToolResult>(
            ClientRequest::CallToolRequest(Request::new(request)),
            context,
        )
        .await
        .map(Into::into)
    }

    async fn list_tools(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        self.typed(ClientRequest::ListToolsRequest(optional(request)), context)
            .await
    }

    async fn on_custom_request(
        &self,
        request: CustomRequest,
        context: RequestContext<RoleServer>,
    ) -> Result<CustomResult, ErrorData> {
        self.raw(ClientRequest::CustomRequest(request), context)
            .await
            .map(CustomResult)
    }

    async fn on_cancelled(
        &self,
        notification: CancelledNotificationParam,
        context: NotificationContext<RoleServer>,
    ) {
        let notification = CancelledNotification::new(notification);
        self.notify(
            ClientNotification::CancelledNotification(notification),
            context,
        )
        .await;
    }

    async fn on_progress(
        &self,
        notification: ProgressNotificationParam,
        context: NotificationContext<RoleServer>,
    ) {
        let notification = ProgressNotification::new(notification);
        self.notify(
            ClientNotification::ProgressNotification(notification),
            context,
        )
        .await;
    }

    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        let notification = InitializedNotification::default();
        self.notify(
            ClientNotification::InitializedNotification(notification),
            context,
        )
        .await;
    }

    async fn on_roots_list_changed(&self, context: NotificationContext<RoleServer>) {
        let notification = RootsListChangedNotification::default();
        self.notify(
            ClientNotification::RootsListChangedNotification(notification),
            context,
        )
        .await;
    }

    async fn on_custom_notification(
        &self,
        notification: CustomNotification,
        context: NotificationContext<RoleServer>,
    ) {
        self.notify(
            ClientNotification::CustomNotification(notification),
            context,
        )
        .await;
    }

    fn get_info(&self) -> InitializeResult {
        self.0.info()
    }

    fn supported_protocol_versions(&self) -> Cow<'static, [ProtocolVersion]> {
        self.0.protocol_versions()
    }
}

/// The hosts the server answers to: rmcp's loopback names, and the listening address when it
/// is a specific one (a `Host` check guards against DNS rebinding).
pub(crate) fn allowed_hosts(local: SocketAddr) -> Vec<String> {
    let mut hosts: Vec<String> = vec!["localhost".into(), "127.0.0.1".into(), "::1".into()];
    let ip = local.ip();
    if !ip.is_unspecified() && !ip.is_loopback() {
        hosts.push(ip.to_string());
    }
    hosts
}
