// Package usecase is the application layer: the operator's use cases (provision a Runtime, tear it down, reap
// shoots whose window passed, restore a deleted runtime) as sequences of domain decisions and port calls. It knows
// only core/domain and core/ports, so every use case runs on the in-memory fakes of adapters/fake in unit and
// property tests; controllers map custom resources to requests and results to status.
package usecase
