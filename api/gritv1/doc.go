// Package gritv1 is grit's gRPC API, generated from
// api/proto/grit/v1/grit.proto by scripts/genproto: the TasksService
// (enqueue, get, list, cancel, publish, dead-letter actions) and the
// WorkersService (claim, heartbeat, complete, fail), for clients and
// remote workers in any language. The server is api/server.
package gritv1
