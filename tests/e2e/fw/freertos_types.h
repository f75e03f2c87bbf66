/* FreeRTOS's TCB, list, queue and event group types as its sources declare them (member names
 * and order from FreeRTOS-Kernel tasks.c, list.h, queue.c and event_groups.c;
 * configuration-dependent members partly left out, as a build may), for the test firmware
 * (rtos_shapes_fw.c, rtos_ctx_fw.c). */
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
typedef struct QueuePointers {
    int8_t *pcTail;
    int8_t *pcReadFrom;
} QueuePointers_t;
typedef struct SemaphoreData {
    TaskHandle_t xMutexHolder;
    UBaseType_t uxRecursiveCallCount;
} SemaphoreData_t;
typedef struct QueueDefinition {
    int8_t *pcHead; /* NULL for a mutex (queueQUEUE_IS_MUTEX) */
    int8_t *pcWriteTo;
    union {
        QueuePointers_t xQueue;
        SemaphoreData_t xSemaphore;
    } u;
    List_t xTasksWaitingToSend;
    List_t xTasksWaitingToReceive;
    volatile UBaseType_t uxMessagesWaiting;
    UBaseType_t uxLength;
    UBaseType_t uxItemSize; /* 0 for a semaphore */
    volatile int8_t cRxLock;
    volatile int8_t cTxLock;
} xQUEUE;
typedef xQUEUE Queue_t;
typedef struct QUEUE_REGISTRY_ITEM {
    const char *pcQueueName;
    struct QueueDefinition *xHandle;
} xQueueRegistryItem;
typedef xQueueRegistryItem QueueRegistryItem_t;
typedef struct EventGroupDef_t {
    TickType_t uxEventBits;
    List_t xTasksWaitingForBits;
} EventGroup_t;

/* list.c's vListInitialise and vListInsertEnd, for the firmware that builds FreeRTOS-shaped lists */
static inline void list_initialise(List_t *l)
{
    ListItem_t *end = (ListItem_t *)&l->xListEnd;
    l->pxIndex = end;
    l->xListEnd.xItemValue = 0xFFFFFFFFu;
    l->xListEnd.pxNext = end;
    l->xListEnd.pxPrevious = end;
    l->uxNumberOfItems = 0;
}

static inline void list_insert_end(List_t *l, ListItem_t *item)
{
    ListItem_t *end = (ListItem_t *)&l->xListEnd;
    item->pxNext = end;
    item->pxPrevious = end->pxPrevious;
    end->pxPrevious->pxNext = item;
    end->pxPrevious = item;
    item->pxContainer = l;
    l->uxNumberOfItems++;
}

#endif
