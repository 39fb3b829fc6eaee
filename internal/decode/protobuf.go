package decode

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/bufbuild/protocompile"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/dynamicpb"

	"handoff/internal/registry"
)

// Protobuf decodes framed Protobuf values: the writer's schema (.proto
// text, with its references as imports) from the registry by the frame's
// id, compiled with protocompile; the message by the frame's message
// indexes; the bytes by google.golang.org/protobuf into a dynamicpb
// message.
type Protobuf struct {
	reg   *registry.Client
	opts  Options
	t     protoText
	files map[int]*protoFile
	msgs  map[protoreflect.MessageDescriptor]*protoMsg
}

// protoMsg is a message type ready to decode: a message reused record
// after record, how to unmarshal into it, and the fields the sink reads.
type protoMsg struct {
	m         *dynamicpb.Message
	unmarshal proto.UnmarshalOptions
	fields    []protoField
}

type protoField struct {
	fd       protoreflect.FieldDescriptor
	name     string
	col      int  // the sink's number for it
	presence bool // read only when set (set)
}

// protoFile is a compiled schema, and its refusal (evolution.go).
type protoFile struct {
	fd      protoreflect.FileDescriptor
	refused map[protoreflect.FullName]*Error
}

// NewProtobufRegistry decodes framed Protobuf with schemas from reg.
func NewProtobufRegistry(reg *registry.Client, opts Options) *Protobuf {
	return &Protobuf{reg: reg, opts: opts, t: protoText{binaryAsString: opts.BinaryAsString},
		files: map[int]*protoFile{}, msgs: map[protoreflect.MessageDescriptor]*protoMsg{}}
}

// Decode implements Decoder.
func (d *Protobuf) Decode(msg []byte, sink Sink) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = errorf(0, "Protobuf decoder failed on this message: %v", p)
		}
	}()
	d.t.reset()
	id, payload, ferr := unframe(msg)
	if ferr != nil {
		return ferr
	}
	idx, payload, ferr := messageIndexes(id, payload)
	if ferr != nil {
		return ferr
	}
	f, err := d.file(id)
	if err != nil {
		return err
	}
	md, derr := messageAt(id, f.fd, idx)
	if derr != nil {
		return derr
	}
	if len(d.opts.Numeric) > 0 {
		if refused, err := d.evolution(id, f, md); err != nil {
			return err
		} else if refused != nil {
			return refused
		}
	}
	pm := d.msgs[md]
	if pm == nil {
		pm = newProtoMsg(md, sink)
		d.msgs[md] = pm
	}
	m := pm.m
	if err := pm.unmarshalInto(payload); err != nil {
		return errorf(id, "not Protobuf %s of schema id %d: %v", md.FullName(), id, err)
	}
	for _, f := range pm.fields {
		if f.presence && !m.Has(f.fd) {
			continue
		}
		if err := sink.Field(f.col, f.name, d.t.field(f.fd, m.Get(f.fd))); err != nil {
			return err
		}
	}
	return nil
}

// unmarshalInto reads payload into the message. protobuf-go's generic
// (dynamicpb) path panics on some malformed input instead of returning an
// error: a map entry whose key field comes twice, the second time with
// another wire type, leaves it a key it cannot convert (v1.36.12,
// proto/decode.go unmarshalMap; found by FuzzProtobuf). Those are bytes
// that are not a message of the schema, said so.
func (pm *protoMsg) unmarshalInto(payload []byte) (err error) {
	defer func() {
		if p := recover(); p != nil {
			pm.m.Reset() // whatever it holds is half a message
			err = fmt.Errorf("malformed (protobuf-go failed on it: %v)", p)
		}
	}()
	return pm.unmarshal.Unmarshal(payload, pm.m)
}

func newProtoMsg(md protoreflect.MessageDescriptor, sink Sink) *protoMsg {
	pm := &protoMsg{m: dynamicpb.NewMessage(md), unmarshal: proto.UnmarshalOptions{
		RecursionLimit: 100,
		// Checking required fields walks every message decoded; proto3
		// has none, and most proto2 schemas none either.
		AllowPartial: !hasRequired(md, map[protoreflect.FullName]bool{}),
	}}
	fields := md.Fields()
	for i := range fields.Len() {
		fd := fields.Get(i)
		name := string(fd.Name())
		if col, ok := sink.Column(name); ok {
			pm.fields = append(pm.fields, protoField{fd: fd, name: name, col: col, presence: fd.IsList() || fd.IsMap() || fd.HasPresence()})
		}
	}
	return pm
}

// hasRequired reports whether a message, or one it holds, has a required
// field (proto2).
func hasRequired(md protoreflect.MessageDescriptor, seen map[protoreflect.FullName]bool) bool {
	if seen[md.FullName()] {
		return false
	}
	seen[md.FullName()] = true
	fields := md.Fields()
	for i := range fields.Len() {
		fd := fields.Get(i)
		if fd.Cardinality() == protoreflect.Required {
			return true
		}
		if m := fd.Message(); m != nil && hasRequired(m, seen) {
			return true
		}
	}
	return false
}

// messageAt finds the message the indexes name: the idx[0]th message of
// the file, then the idx[1]th nested in it, and so on.
func messageAt(id int, fd protoreflect.FileDescriptor, idx []int) (protoreflect.MessageDescriptor, *Error) {
	msgs := fd.Messages()
	var md protoreflect.MessageDescriptor
	for _, i := range idx {
		if i >= msgs.Len() {
			return nil, errorf(id, "message index %v does not name a message of schema id %d (%d there)", idx, id, msgs.Len())
		}
		md = msgs.Get(i)
		msgs = md.Messages()
	}
	if md == nil {
		return nil, errorf(id, "schema id %d has no message", id)
	}
	return md, nil
}

// file returns schema id compiled, once per process (registry.Schema.Memo).
func (d *Protobuf) file(id int) (*protoFile, error) {
	if f, ok := d.files[id]; ok {
		return f, nil
	}
	rs, err := d.reg.Schema(context.Background(), id)
	var nf *registry.NotFoundError
	switch {
	case errors.As(err, &nf):
		return nil, &Error{SchemaID: id, Msg: nf.Error()}
	case err != nil:
		return nil, err
	}
	if rs.Type != 1 { // sr.TypeProtobuf
		return nil, errorf(id, "schema id %d is %s schema, not Protobuf: the spec's input format is protobuf", id, typeName(rs))
	}
	fd, err := compileProto(rs)
	if err != nil {
		return nil, errorf(id, "schema id %d is not a valid Protobuf schema: %v", id, err)
	}
	f := &protoFile{fd: fd, refused: map[protoreflect.FullName]*Error{}}
	d.files[id] = f
	return f, nil
}

func compileProto(rs *registry.Schema) (protoreflect.FileDescriptor, error) {
	v, err := rs.Memo("protobuf", func() (any, error) {
		sources := map[string]string{}
		var add func(s *registry.Schema)
		add = func(s *registry.Schema) {
			for _, ref := range s.References {
				sources[ref.Name] = ref.Schema.Text
				add(ref.Schema)
			}
		}
		add(rs)
		main := fmt.Sprintf("handoff-schema-%d.proto", rs.ID)
		sources[main] = rs.Text
		c := protocompile.Compiler{Resolver: protocompile.WithStandardImports(&protocompile.SourceResolver{
			Accessor: func(path string) (io.ReadCloser, error) {
				if src, ok := sources[path]; ok {
					return io.NopCloser(strings.NewReader(src)), nil
				}
				return nil, os.ErrNotExist
			},
		})}
		files, err := c.Compile(context.Background(), main)
		if err != nil {
			return nil, err
		}
		if fd, err := nativeFile(files[0]); err == nil {
			return fd, nil
		}
		return protoreflect.FileDescriptor(files[0]), nil // slower, as correct
	})
	if err != nil {
		return nil, err
	}
	return v.(protoreflect.FileDescriptor), nil
}

// nativeFile rebuilds a compiled file, and the files it imports, as
// protobuf-go's own descriptors (protodesc): protocompile's work out
// HasPresence and the like on every call, and dynamicpb asks them for
// every field of every message it decodes.
func nativeFile(fd protoreflect.FileDescriptor) (protoreflect.FileDescriptor, error) {
	set := &descriptorpb.FileDescriptorSet{}
	seen := map[string]bool{}
	var add func(fd protoreflect.FileDescriptor)
	add = func(fd protoreflect.FileDescriptor) {
		if seen[fd.Path()] {
			return
		}
		seen[fd.Path()] = true
		imports := fd.Imports()
		for i := range imports.Len() {
			add(imports.Get(i).FileDescriptor)
		}
		set.File = append(set.File, protodesc.ToFileDescriptorProto(fd))
	}
	add(fd)
	files, err := protodesc.NewFiles(set)
	if err != nil {
		return nil, err
	}
	return files.FindFileByPath(fd.Path())
}

// evolution refuses a message whose fields the spec reads as numbers
// stopped being numbers since the version before (evolution.go).
func (d *Protobuf) evolution(id int, f *protoFile, md protoreflect.MessageDescriptor) (*Error, error) {
	if refused, ok := f.refused[md.FullName()]; ok {
		return refused, nil
	}
	rs, err := d.reg.Schema(context.Background(), id)
	if err != nil {
		return nil, err
	}
	prev, err := d.reg.Previous(context.Background(), rs)
	if err != nil {
		return nil, err
	}
	var refused *Error
	if prev != nil && prev.Type == rs.Type {
		if pfd, err := compileProto(prev); err == nil {
			if pmd := findMessage(pfd.Messages(), md.FullName()); pmd != nil {
				refused = evolve(id, prev.ID, string(md.FullName()), protoKinds(pmd), protoKinds(md), d.opts.Numeric)
			}
		}
	}
	f.refused[md.FullName()] = refused
	return refused, nil
}

// findMessage finds a message of a file by its full name, nested or not.
func findMessage(msgs protoreflect.MessageDescriptors, name protoreflect.FullName) protoreflect.MessageDescriptor {
	if md := msgs.ByName(name.Name()); md != nil && md.FullName() == name {
		return md
	}
	for i := range msgs.Len() {
		if md := findMessage(msgs.Get(i).Messages(), name); md != nil {
			return md
		}
	}
	return nil
}

func protoKinds(md protoreflect.MessageDescriptor) map[string]string {
	kinds := map[string]string{}
	fields := md.Fields()
	for i := range fields.Len() {
		fd := fields.Get(i)
		kinds[string(fd.Name())] = protoKind(fd)
	}
	return kinds
}

func protoKind(fd protoreflect.FieldDescriptor) string {
	switch {
	case fd.IsList():
		return "repeated"
	case fd.IsMap():
		return "map"
	}
	switch fd.Kind() {
	case protoreflect.BoolKind, protoreflect.StringKind, protoreflect.BytesKind, protoreflect.EnumKind:
		return fd.Kind().String()
	case protoreflect.MessageKind, protoreflect.GroupKind:
		switch fd.Message().FullName() {
		case "google.protobuf.DoubleValue", "google.protobuf.FloatValue", "google.protobuf.Int64Value",
			"google.protobuf.UInt64Value", "google.protobuf.Int32Value", "google.protobuf.UInt32Value":
			return kindNumber
		}
		return string(fd.Message().FullName())
	}
	return kindNumber
}
