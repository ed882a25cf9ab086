package main

// Tests of server.go: Config defaults.

import (
	"net/http"
	"testing"
)

// TestZeroConfig: a Config left at zero serves with the default limits.
func TestZeroConfig(t *testing.T) {
	t.Parallel()
	a := startServer(t, Config{}, nil).checkingEvery()
	apiSeed(t, a.store, apiNumbered(3)...)
	a.on(t).create(apiPadded(1 << 20))
	if l := a.on(t).list("requestParams.pageSize=1000"); l.TotalResults != 4 || l.TotalPages != 1 || len(l.ResourceList) != 4 {
		t.Errorf("TotalResults %d TotalPages %d, %d items", l.TotalResults, l.TotalPages, len(l.ResourceList))
	}
	a.on(t).do(http.MethodPost, "/api/v2/resource", apiPadded(1<<20+1)).wantError(t, http.StatusRequestEntityTooLarge,
		"The request body is larger than the limit of 1048576 bytes.", nil)
}
