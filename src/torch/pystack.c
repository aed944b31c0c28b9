/* Python frames, for the core's Python stacks: "file:line in function", innermost first.
 *
 * The interpreter's API is found in the process at run time (dlsym), so the plugin needs no
 * Python headers and loads in a process without Python too (then there are no Python stacks).
 * Frames are walked only while this thread holds the GIL; a thread that released it (ctypes
 * does, around every foreign call) takes it back when the caller allows it, and only if Python
 * already knows the thread: no thread state is ever made here.
 *
 * A frame's text is made once per (code object, line): the cache keeps a reference to the code
 * object, so its address is never another's. */
#define _GNU_SOURCE
#include "plugin.h"

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

typedef void PyObj;

static struct {
    const hipshadow_torch_core *core;
    int ready;
    int (*is_initialized)(void);
    int (*is_finalizing)(void);
    PyObj *(*current_unchecked)(void); /* PyThreadState_GetUnchecked / _PyThreadState_UncheckedGet */
    int (*gil_check)(void);
    PyObj *(*this_thread_state)(void);
    int (*gil_ensure)(void);
    void (*gil_release)(int);
    PyObj *(*thread_frame)(PyObj *tstate);
    PyObj *(*frame_back)(PyObj *frame);
    PyObj *(*frame_code)(PyObj *frame);
    int (*frame_line)(PyObj *frame);
    PyObj *(*get_attr)(PyObj *, const char *);
    const char *(*as_utf8)(PyObj *);
    void (*incref)(PyObj *);
    void (*decref)(PyObj *);
    void (*err_fetch)(PyObj **, PyObj **, PyObj **);
    void (*err_restore)(PyObj *, PyObj *, PyObj *);
} py;

#define FIND(field, name) (*(void **)&py.field = dlsym(RTLD_DEFAULT, name))

void hs_tp_python_init(const hipshadow_torch_core *core)
{
    py.core = core;
    if (!core->python_stacks || !core->pyframe_intern || !core->pystack_put)
        return;
    FIND(is_initialized, "Py_IsInitialized");
    if (!FIND(is_finalizing, "Py_IsFinalizing"))
        FIND(is_finalizing, "_Py_IsFinalizing");
    if (!FIND(current_unchecked, "PyThreadState_GetUnchecked"))
        FIND(current_unchecked, "_PyThreadState_UncheckedGet");
    FIND(gil_check, "PyGILState_Check");
    FIND(this_thread_state, "PyGILState_GetThisThreadState");
    FIND(gil_ensure, "PyGILState_Ensure");
    FIND(gil_release, "PyGILState_Release");
    FIND(thread_frame, "PyThreadState_GetFrame");
    FIND(frame_back, "PyFrame_GetBack");
    FIND(frame_code, "PyFrame_GetCode");
    FIND(frame_line, "PyFrame_GetLineNumber");
    FIND(get_attr, "PyObject_GetAttrString");
    FIND(as_utf8, "PyUnicode_AsUTF8");
    FIND(incref, "Py_IncRef");
    FIND(decref, "Py_DecRef");
    FIND(err_fetch, "PyErr_Fetch");
    FIND(err_restore, "PyErr_Restore");
    py.ready = py.is_initialized && py.is_finalizing && (py.current_unchecked || py.gil_check) &&
               py.this_thread_state && py.gil_ensure && py.gil_release && py.thread_frame && py.frame_back &&
               py.frame_code && py.frame_line && py.get_attr && py.as_utf8 && py.incref && py.decref && py.err_fetch &&
               py.err_restore;
}

/* ---- (code object, line) -> the core's frame id ---- */

enum { CACHE_SIZE = 1 << 16, CACHE_FULL = CACHE_SIZE / 4 * 3 };
static struct {
    PyObj *code;
    int line;
    uint32_t id;
} cache[CACHE_SIZE]; /* only touched with the GIL held: the GIL is its lock */
static unsigned cached;

/* Drops the exception a failed lookup left (Py_DecRef takes NULL). */
static void clear_error(void)
{
    PyObj *t, *v, *tb;
    py.err_fetch(&t, &v, &tb);
    py.decref(t);
    py.decref(v);
    py.decref(tb);
}

static const char *attr_text(PyObj *obj, const char *name, PyObj **keep)
{
    *keep = py.get_attr(obj, name);
    const char *t = *keep ? py.as_utf8(*keep) : NULL;
    return t ? t : "?";
}

static uint32_t frame_text_id(PyObj *code, int line)
{
    PyObj *type, *value, *tb, *file, *func;
    py.err_fetch(&type, &value, &tb); /* a pending exception stays as it was */
    const char *f = attr_text(code, "co_filename", &file);
    const char *n = attr_text(code, "co_qualname", &func);
    if (!func) {
        clear_error(); /* Python < 3.11: no co_qualname */
        n = attr_text(code, "co_name", &func);
    }
    char text[1024];
    snprintf(text, sizeof text, "%s:%d in %s", f, line, n);
    if (file)
        py.decref(file);
    if (func)
        py.decref(func);
    clear_error();
    py.err_restore(type, value, tb);
    return py.core->pyframe_intern(text);
}

static uint32_t frame_id(PyObj *code, int line)
{
    size_t h = (((uintptr_t)code >> 4) * 0x9E3779B97F4A7C15ull + (unsigned)line) & (CACHE_SIZE - 1);
    for (size_t i = h;; i = (i + 1) & (CACHE_SIZE - 1)) {
        if (cache[i].code == code && cache[i].line == line)
            return cache[i].id;
        if (!cache[i].code)
            break;
    }
    uint32_t id = frame_text_id(code, line);
    if (id && cached < CACHE_FULL) {
        size_t i = h;
        while (cache[i].code)
            i = (i + 1) & (CACHE_SIZE - 1);
        py.incref(code);
        cache[i].code = code;
        cache[i].line = line;
        cache[i].id = id;
        cached++;
    }
    return id;
}

/* With the GIL held. */
static uint32_t walk(PyObj *tstate)
{
    uint32_t ids[64];
    int n = 0;
    PyObj *frame = py.thread_frame(tstate);
    while (frame && n < 64) {
        PyObj *code = py.frame_code(frame);
        if (code) {
            uint32_t id = frame_id(code, py.frame_line(frame));
            if (id)
                ids[n++] = id;
            py.decref(code);
        }
        PyObj *back = py.frame_back(frame);
        py.decref(frame);
        frame = back;
    }
    if (frame)
        py.decref(frame);
    return n ? py.core->pystack_put(ids, n) : 0;
}

static int holds_gil(void)
{
    if (py.current_unchecked)
        return py.current_unchecked() != NULL;
    return py.gil_check();
}

uint32_t hs_tp_python_stack(int may_take_gil)
{
    if (!py.ready || !py.is_initialized() || py.is_finalizing())
        return 0;
    PyObj *mine = py.this_thread_state();
    if (!mine)
        return 0; /* a thread Python does not know (the autograd engine's, NCCL's, ...) */
    if (holds_gil())
        return walk(mine);
    if (!may_take_gil)
        return 0;
    int state = py.gil_ensure();
    uint32_t id = walk(mine);
    py.gil_release(state);
    return id;
}
