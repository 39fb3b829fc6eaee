package decode

import (
	"fmt"

	"handoff/internal/registry"
)

// kindNumber is the kind of every numeric field type, for the evolution
// check.
const kindNumber = "number"

// evolve checks a writer's schema against the version before it in its
// subject (registry.Client.Previous): a schema that changes a top-level
// field the spec reads as a number (Options.Numeric) into something else
// is refused, and every record framed with it is unparseable with an
// error that names the field, both schema ids and what to do. Fields
// added, removed, or changed among kinds the spec reads as strings are
// read as they come: discovered and string dimensions take any kind. The
// check depends only on the registry's contents, so every parser and every
// worker decides alike.
func evolve(id, prevID int, record string, prev, now map[string]string, numeric []string) *Error {
	for _, f := range numeric {
		was, is := prev[f], now[f]
		if was == kindNumber && is != "" && is != kindNumber {
			return errorf(id, "schema id %d changes field %q of %s from a number (schema id %d) to %s, and the spec reads it as a number: "+
				"records written with schema id %d are refused. Register a schema that keeps %q numeric (BACKWARD compatibility: add fields with defaults), "+
				"or make %q a string dimension and drop the metrics that read it",
				id, f, record, prevID, is, id, f, f)
		}
	}
	return nil
}

// typeName names a registry schema's type for messages.
func typeName(rs *registry.Schema) string {
	names := []string{"an Avro", "a Protobuf", "a JSON Schema"}
	if int(rs.Type) >= 0 && int(rs.Type) < len(names) {
		return names[rs.Type]
	}
	return fmt.Sprintf("a type-%d", rs.Type)
}
