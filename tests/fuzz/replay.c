/* replay.c - feeds every file of the given folders (or files) to
 * LLVMFuzzerTestOneInput once, so the fuzz corpora run as ordinary tests
 * under any compiler. Exits 0 when all ran; a crash is the failure. */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int run_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "replay: cannot open %s\n", path);
        return -1;
    }
    uint8_t *data = NULL;
    size_t len = 0, cap = 0;
    for (;;) {
        if (len == cap) {
            cap = cap ? cap * 2 : 65536;
            uint8_t *p = realloc(data, cap);
            if (!p) {
                free(data);
                fclose(f);
                return -1;
            }
            data = p;
        }
        size_t n = fread(data + len, 1, cap - len, f);
        if (n == 0)
            break;
        len += n;
    }
    fclose(f);
    /* an exact-size copy, so a read past the end is an ASan report */
    uint8_t *exact = malloc(len ? len : 1);
    if (exact)
        memcpy(exact, data, len);
    free(data);
    if (!exact)
        return -1;
    LLVMFuzzerTestOneInput(exact, len);
    free(exact);
    return 0;
}

static int cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int run_dir(const char *dir, size_t *count)
{
    DIR *d = opendir(dir);
    if (!d) {
        fprintf(stderr, "replay: cannot open %s\n", dir);
        return -1;
    }
    char **names = NULL;
    size_t n = 0;
    int rc = 0;
    for (struct dirent *e; (e = readdir(d));) {
        if (e->d_name[0] == '.')
            continue;
        char **p = realloc(names, (n + 1) * sizeof *p);
        if (!p || !(p[n] = strdup(e->d_name))) {
            names = p ? p : names;
            rc = -1;
            break;
        }
        names = p;
        n++;
    }
    closedir(d);
    if (n)
        qsort(names, n, sizeof *names, cmp);
    for (size_t i = 0; i < n && rc == 0; i++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        struct stat st;
        if (stat(path, &st) == 0 && S_ISREG(st.st_mode)) {
            rc = run_file(path);
            (*count)++;
        }
    }
    for (size_t i = 0; i < n; i++)
        free(names[i]);
    free(names);
    return rc;
}

int main(int argc, char **argv)
{
    size_t count = 0;
    for (int i = 1; i < argc; i++) {
        struct stat st;
        if (stat(argv[i], &st) != 0) {
            fprintf(stderr, "replay: no such input %s\n", argv[i]);
            return 1;
        }
        if ((S_ISDIR(st.st_mode) ? run_dir(argv[i], &count) : (count++, run_file(argv[i]))) != 0)
            return 1;
    }
    printf("replayed %zu inputs\n", count);
    return count ? 0 : 1;
}
