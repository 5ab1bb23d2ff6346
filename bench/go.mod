module github.com/grit-run/grit/bench

go 1.26.0

require (
	github.com/avast/retry-go/v5 v5.1.1
	github.com/cenkalti/backoff/v5 v5.0.3
	github.com/failsafe-go/failsafe-go v0.9.8
	github.com/grit-run/grit v0.0.0-00010101000000-000000000000
)

require github.com/bits-and-blooms/bitset v1.24.4 // indirect

replace github.com/grit-run/grit => ../
