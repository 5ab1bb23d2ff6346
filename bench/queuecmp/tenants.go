package main

import (
	"context"
	"fmt"
)

// manyTenants is how many tenants the many-tenants systems spread their
// jobs over: job i is tenant i mod manyTenants's.
const manyTenants = 10000

// gritTenantsSystem is a grit system (base) with its jobs spread over
// manyTenants tenants, compared with base alone: what fair claims across
// tenants cost when there are many (a claim's cost must not grow with
// them).
func gritTenantsSystem(name string, base system) system {
	sys := base
	sys.name = name
	sys.versus = []string{base.name}
	sys.config = fmt.Sprintf("%s, jobs spread over %d tenants", base.config, manyTenants)
	sys.open = func(ctx context.Context, e *env, at string, h handlerFunc) (queue, error) {
		q, err := base.open(ctx, e, at, h)
		if err != nil {
			return nil, err
		}
		q.(*gritQueue).tenants = manyTenants
		return q, nil
	}
	return sys
}
