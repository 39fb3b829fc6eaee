package restcatalog

// refuse answers a write: every table here is owned by the supervisor
// that publishes it, whose publish transaction is its one writer (it
// moves the table's snapshot together with the Kafka offsets), so no
// write comes through the catalog. 403: the caller is known (the token
// was checked first) and may not do this.
func (s *Server) refuse(operation string, req request) *apiError {
	ns := namespaceName(req.namespace)
	switch operation {
	case "createNamespace", "dropNamespace", "updateProperties":
		return forbidden("%s refused: this catalog is read-only; the namespace %s holds handoff's tables, each owned by the supervisor that ingests it",
			operation, namespaceName(s.namespace))
	case "updateTable", "dropTable":
		return forbidden("%s refused: table %s.%s is owned by its handoff supervisor, the table's only writer (each publish commits its snapshot with the Kafka offsets); this catalog serves it read-only",
			operation, ns, req.table)
	}
	// createTable, registerTable, renameTable, commitTransaction.
	return forbidden("%s refused: this catalog is read-only; its tables are created and changed only by the handoff supervisors that own them (a datasource's first publish creates its table)",
		operation)
}
