package pgcluster

import (
	"fmt"
	"io/fs"
	"os"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"syscall"
)

// runAs is the identity initdb and postgres run as. Postgres refuses to run
// as root, so root hands the cluster to the "postgres" OS user; anyone else
// runs it as themselves (cred nil).
type runAs struct {
	cred *syscall.Credential
}

func currentRunAs() (runAs, error) {
	if os.Geteuid() != 0 {
		return runAs{}, nil
	}
	u, err := user.Lookup("postgres")
	if err != nil {
		return runAs{}, fmt.Errorf("running as root, postgres must run as the postgres OS user, which is missing (%w): apt-get install postgresql creates it", err)
	}
	uid, err := strconv.ParseUint(u.Uid, 10, 32)
	if err != nil {
		return runAs{}, fmt.Errorf("postgres uid %q: %w", u.Uid, err)
	}
	gid, err := strconv.ParseUint(u.Gid, 10, 32)
	if err != nil {
		return runAs{}, fmt.Errorf("postgres gid %q: %w", u.Gid, err)
	}
	cred := &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid), Groups: []uint32{}}
	if ids, err := u.GroupIds(); err == nil {
		for _, id := range ids {
			if g, err := strconv.ParseUint(id, 10, 32); err == nil {
				cred.Groups = append(cred.Groups, uint32(g))
			}
		}
	}
	return runAs{cred: cred}, nil
}

func (r runAs) sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Credential: r.cred}
}

func chownTree(dir string, uid, gid int) error {
	err := filepath.WalkDir(dir, func(p string, _ fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(p, uid, gid)
	})
	if err != nil {
		return fmt.Errorf("chown %s to postgres: %w", dir, err)
	}
	return nil
}

// checkReachable reports a parent of dir that the postgres user cannot
// search, such as a 0700 root-owned temp dir, before initdb fails on it
// with a less helpful message.
func (r runAs) checkReachable(dir string) error {
	for p := filepath.Dir(dir); ; p = filepath.Dir(p) {
		fi, err := os.Stat(p)
		if err != nil {
			return fmt.Errorf("stat %s: %w", p, err)
		}
		st := fi.Sys().(*syscall.Stat_t)
		bit := fs.FileMode(0o001)
		switch {
		case st.Uid == r.cred.Uid:
			bit = 0o100
		case st.Gid == r.cred.Gid || slices.Contains(r.cred.Groups, st.Gid):
			bit = 0o010
		}
		if fi.Mode().Perm()&bit == 0 {
			return fmt.Errorf("the postgres OS user cannot reach %s: parent %s is %v, uid %d: chmod o+x it or use a Dir under a world-searchable directory such as /tmp", dir, p, fi.Mode().Perm(), st.Uid)
		}
		if p == filepath.Dir(p) {
			return nil
		}
	}
}
