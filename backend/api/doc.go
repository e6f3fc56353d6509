// Package api is the REST interface under /api: gin handlers that decode a request,
// call the service layer with the caller's principal and encode the answer. Rules live
// in the service, not here. The OpenAPI document in openapi.json describes every route.
package api
