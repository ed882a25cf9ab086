//go:build !unix

package resourcedir

// fileLock does nothing where flock(2) does not exist: one server per
// snapshot file is then up to the user.
type fileLock struct{}

func lockFile(path string) (*fileLock, error) { return &fileLock{}, nil }

func (l *fileLock) release() {}
