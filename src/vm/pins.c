/* SPDX-License-Identifier: MIT */
/*
 * pins.c - the pinned guest's module list (pins.h; the values' origin is
 * documented there and in docs/vm.md, "The pinned guest").
 */
#include "pins.h"

#include "../util/cleanup.h"

static const struct berth_vm_module_pin modules[] = {
    {"vsock.ko.xz", "afd62473bb837877f61bfa9e0fa8a46954049a7926f3d3f9e594d56cd824b6be"},
    {"vmw_vsock_virtio_transport_common.ko.xz",
     "7c8354445b57bd2a0f98e7b77f4339ba319b1306106255876047af5feb5bda82"},
    {"vmw_vsock_virtio_transport.ko.xz", "6bc94de88841f751cf1fb597c25323240d7ad4cc69e690b65efac6bd0e51208e"},
};

const struct berth_vm_module_pin *berth_vm_modules(size_t *n)
{
	*n = BERTH_ARRAY_SIZE(modules);
	return modules;
}
