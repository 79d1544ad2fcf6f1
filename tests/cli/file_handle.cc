// A small helper for mount_file_handles.sh: file handles from the command line.
//
//   file_handle encode PATH             prints PATH's handle as TYPE:HEX
//   file_handle open MOUNTPOINT HANDLE   opens the handle on the mount at
//                                        MOUNTPOINT and prints "ino N", then
//                                        a file's bytes or a directory's
//                                        names, one a line
//
// A failure prints the failed call and strerror on stderr, exits 1, and for
// open_by_handle_at prints the errno name (ESTALE, ...) on stdout, so the
// script can tell a stale handle from anything else.

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int Encode(const char* path) {
  auto* fh = static_cast<struct file_handle*>(malloc(sizeof(struct file_handle) + MAX_HANDLE_SZ));
  if (fh == NULL) return 1;
  fh->handle_bytes = MAX_HANDLE_SZ;
  int mount_id;
  if (name_to_handle_at(AT_FDCWD, path, fh, &mount_id, 0) != 0) {
    fprintf(stderr, "name_to_handle_at %s: %s\n", path, strerror(errno));
    return 1;
  }
  printf("%d:", fh->handle_type);
  for (unsigned i = 0; i < fh->handle_bytes; i++) printf("%02x", fh->f_handle[i]);
  printf("\n");
  free(fh);
  return 0;
}

static int Open(const char* mountpoint, const char* text) {
  int type;
  int used;
  if (sscanf(text, "%d:%n", &type, &used) != 1) {
    fprintf(stderr, "not a handle: %s\n", text);
    return 2;
  }
  const char* hex = text + used;
  size_t n = strlen(hex) / 2;
  auto* fh = static_cast<struct file_handle*>(malloc(sizeof(struct file_handle) + n));
  if (fh == NULL) return 1;
  fh->handle_type = type;
  fh->handle_bytes = static_cast<unsigned>(n);
  for (size_t i = 0; i < n; i++) {
    unsigned byte;
    if (sscanf(hex + 2 * i, "%2x", &byte) != 1) return 2;
    fh->f_handle[i] = static_cast<unsigned char>(byte);
  }
  int mount_fd = open(mountpoint, O_RDONLY | O_DIRECTORY);
  if (mount_fd < 0) {
    fprintf(stderr, "open %s: %s\n", mountpoint, strerror(errno));
    return 1;
  }
  int fd = open_by_handle_at(mount_fd, fh, O_RDONLY);
  if (fd < 0) {
    const int err = errno;
    printf("%s\n", strerrorname_np(err) ? strerrorname_np(err) : "?");
    fprintf(stderr, "open_by_handle_at: %s\n", strerror(err));
    return 1;
  }
  struct stat st;
  if (fstat(fd, &st) != 0) return 1;
  printf("ino %llu\n", static_cast<unsigned long long>(st.st_ino));
  if (S_ISDIR(st.st_mode)) {
    DIR* d = fdopendir(fd);
    if (d == NULL) return 1;
    struct dirent* e;
    while ((e = readdir(d)) != NULL) {
      if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0) printf("%s\n", e->d_name);
    }
    closedir(d);
  } else {
    char buf[4096];
    ssize_t got;
    while ((got = read(fd, buf, sizeof(buf))) > 0) fwrite(buf, 1, static_cast<size_t>(got), stdout);
    if (got < 0) {
      fprintf(stderr, "read: %s\n", strerror(errno));
      return 1;
    }
    close(fd);
  }
  return 0;
}

int main(int argc, char** argv) {
  if (argc == 3 && strcmp(argv[1], "encode") == 0) return Encode(argv[2]);
  if (argc == 4 && strcmp(argv[1], "open") == 0) return Open(argv[2], argv[3]);
  fprintf(stderr, "usage: %s encode PATH | open MOUNTPOINT TYPE:HEX\n", argv[0]);
  return 2;
}
