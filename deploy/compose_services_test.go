package deploy

import (
	"slices"
	"strings"
	"testing"

	"handoff/internal/searchattr"
)

func TestComposeTemporalSetup(t *testing.T) {
	p := loadCompose(t)
	got := strings.Fields(env(svc(t, p, "temporal-setup"))["SEARCH_ATTRIBUTES"])
	if !slices.Equal(slices.Sorted(slices.Values(got)), slices.Sorted(slices.Values(searchattr.Names))) {
		t.Errorf("temporal-setup registers %q, the supervisors set %q", got, searchattr.Names)
	}
	// The server and the schema tool use one database.
	server, schema := env(svc(t, p, "temporal")), env(svc(t, p, "temporal-schema"))
	db := env(svc(t, p, "temporal-postgres"))
	if server["POSTGRES_SEEDS"] != "temporal-postgres" || schema["POSTGRES_SEEDS"] != server["POSTGRES_SEEDS"] ||
		server["POSTGRES_USER"] != db["POSTGRES_USER"] || schema["POSTGRES_USER"] != db["POSTGRES_USER"] ||
		server["POSTGRES_PWD"] != db["POSTGRES_PASSWORD"] || schema["SQL_PASSWORD"] != db["POSTGRES_PASSWORD"] {
		t.Errorf("temporal %v and temporal-schema %v do not both use temporal-postgres %v", server, schema, db)
	}
}

func TestComposeKafka(t *testing.T) {
	p := loadCompose(t)
	k := svc(t, p, "kafka")
	e := env(k)
	for _, role := range []string{"broker", "controller"} {
		if !slices.Contains(strings.Split(e["KAFKA_PROCESS_ROLES"], ","), role) {
			t.Errorf("KAFKA_PROCESS_ROLES %q: a single KRaft node is %s too", e["KAFKA_PROCESS_ROLES"], role)
		}
	}
	if e["CLUSTER_ID"] == "" || e["KAFKA_CONTROLLER_QUORUM_VOTERS"] != e["KAFKA_NODE_ID"]+"@kafka:9093" {
		t.Errorf("KRaft: cluster id %q, voters %q for node %q", e["CLUSTER_ID"], e["KAFKA_CONTROLLER_QUORUM_VOTERS"], e["KAFKA_NODE_ID"])
	}
	if !strings.HasPrefix(e["KAFKA_LOG_DIRS"], "/var/lib/kafka/data") || len(k.Volumes) != 1 || k.Volumes[0].Target != "/var/lib/kafka/data" {
		t.Errorf("Kafka's log dirs %q are not on its volume %v", e["KAFKA_LOG_DIRS"], k.Volumes)
	}
	// The external listener is the published port on localhost, for
	// clients on the host such as starter produce.
	if !slices.Contains(advertised(env(k)), "localhost:"+k.Ports[0].Published) {
		t.Errorf("kafka publishes %s but advertises %q", k.Ports[0].Published, advertised(env(k)))
	}
}
