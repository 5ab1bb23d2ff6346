package herd

import (
	"container/heap"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"testing"
	"time"
)

func TestTmpDebug(t *testing.T) {
	cfg := Config{Seed: 1}.withDefaults()
	s := Strategy{Jitter: "full", Protected: true}
	bo, _ := s.backoff(cfg)
	h := fnv.New64a()
	h.Write([]byte(s.String()))
	m := &sim{cfg: cfg, s: s, bo: bo, rng: rand.New(rand.NewPCG(cfg.Seed, h.Sum64()))}
	m.budget, m.bs = protection(cfg, &m.now)
	m.res = Result{Strategy: s.String(), Load: make([]float64, int(cfg.Horizon/cfg.Bucket)+1)}
	m.q = make(queue, cfg.Clients)
	for i := range m.q {
		m.q[i] = &client{id: i, next: time.Duration(m.rng.Float64() * float64(cfg.Spread))}
	}
	heap.Init(&m.q)
	m.cfg.Horizon = 40 * time.Second
	m.loop()
	fmt.Printf("circuit %+v ramp %+v budget %+v\n", m.circuit.State, m.circuit.Ramp, m.budget)
}
