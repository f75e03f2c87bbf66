/* FreeRTOS's TCB and list types as its sources declare them (member names and order from
 * FreeRTOS-Kernel tasks.c and list.h; configuration-dependent members partly left out, as a
 * build may), for the test firmware (rtos_shapes_fw.c, rtos_ports_fw.c). */
#ifndef FREERTOS_TYPES_H
#define FREERTOS_TYPES_H

#include <stdint.h>

typedef uint32_t StackType_t;
typedef unsigned long UBaseType_t;
typedef uint32_t TickType_t;
struct xLIST;
struct xLIST_ITEM {
    volatile TickType_t xItemValue;
    struct xLIST_ITEM *volatile pxNext;
    struct xLIST_ITEM *volatile pxPrevious;
    void *pvOwner;
    struct xLIST *volatile pxContainer;
};
typedef struct xLIST_ITEM ListItem_t;
struct xMINI_LIST_ITEM {
    volatile TickType_t xItemValue;
    struct xLIST_ITEM *volatile pxNext;
    struct xLIST_ITEM *volatile pxPrevious;
};
typedef struct xMINI_LIST_ITEM MiniListItem_t;
typedef struct xLIST {
    volatile UBaseType_t uxNumberOfItems;
    ListItem_t *volatile pxIndex;
    MiniListItem_t xListEnd;
} List_t;
typedef struct tskTaskControlBlock {
    volatile StackType_t *pxTopOfStack;
    ListItem_t xStateListItem;
    ListItem_t xEventListItem;
    UBaseType_t uxPriority;
    StackType_t *pxStack;
    char pcTaskName[16];
#if !defined(FREERTOS_NO_END) /* configRECORD_STACK_HIGH_ADDRESS */
    StackType_t *pxEndOfStack;
#endif
    UBaseType_t uxBasePriority;
    UBaseType_t uxMutexesHeld;
    volatile uint32_t ulNotifiedValue[1];
    volatile uint8_t ucNotifyState[1];
} tskTCB;
typedef tskTCB TCB_t;
typedef struct tskTaskControlBlock *TaskHandle_t;

#endif
